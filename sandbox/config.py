"""Sandbox limits and configuration, with the defaults this project runs with.

The defaults are sized for the project's machine class (2 cores, 24 GiB): four slots, each
capped at 512 MiB of memory in aggregate (cgroup) and 1 GiB of address space per process,
so even the worst case of every slot at its limit leaves the host responsive.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

TierName = Literal["bubblewrap", "namespaces", "degraded"]
TierChoice = Literal["auto", "bubblewrap", "namespaces", "degraded"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits. ``timeout_s`` is wall clock; CPU time is capped just above it."""

    timeout_s: float = 30.0
    max_timeout_s: float = 300.0
    memory_bytes: int = 512 * MiB
    address_space_bytes: int = 1024 * MiB
    file_size_bytes: int = 64 * MiB
    processes: int = 32
    open_files: int = 256
    workspace_bytes: int = 64 * MiB
    skills_bytes: int = 64 * MiB
    tmp_bytes: int = 16 * MiB
    max_output_bytes: int = 4096
    max_log_bytes: int = 1 * MiB
    logs_preview_bytes: int = 2048
    max_blob_bytes_per_run: int = 64 * MiB
    max_blobs_per_run: int = 64

    def cpu_seconds(self, timeout_s: float) -> int:
        return int(timeout_s) + 2

    def for_launcher(self, timeout_s: float) -> dict[str, int]:
        """The subset of limits the in-sandbox launcher applies as rlimits and mount sizes."""
        return {
            "cpu_s": self.cpu_seconds(timeout_s),
            "address_space_bytes": self.address_space_bytes,
            "file_size_bytes": self.file_size_bytes,
            "processes": self.processes,
            "open_files": self.open_files,
            "workspace_bytes": self.workspace_bytes,
            "skills_bytes": self.skills_bytes,
            "tmp_bytes": self.tmp_bytes,
        }


@dataclass(frozen=True)
class SandboxConfig:
    """How to isolate runs. ``tier="auto"`` picks the strongest tier that works here."""

    tier: TierChoice = "auto"
    allow_degraded: bool = False
    python: str = "/usr/bin/python3"
    bwrap: str | None = None
    slots: int = 4
    uid_base: int = 2_000_000_000
    uid_range: int = 256
    max_pending: int = 1024
    lock_dir: Path = Path("/run/noma-sandbox")
    limits: Limits = field(default_factory=Limits)

    def with_limits(self, **changes: Any) -> SandboxConfig:
        return replace(self, limits=replace(self.limits, **changes))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SandboxConfig:
        """Read ``NOMA_SANDBOX_*`` overrides; unset variables keep the defaults."""
        env = os.environ if environ is None else environ
        base = cls()
        tier = env.get("NOMA_SANDBOX_TIER", base.tier)
        if tier not in ("auto", "bubblewrap", "namespaces", "degraded"):
            raise ValueError(
                f"NOMA_SANDBOX_TIER must be auto|bubblewrap|namespaces|degraded, not {tier!r}"
            )
        return cls(
            tier=tier,  # type: ignore[arg-type]
            allow_degraded=env.get("NOMA_SANDBOX_ALLOW_DEGRADED", "") in ("1", "true", "yes"),
            python=env.get("NOMA_SANDBOX_PYTHON", base.python),
            bwrap=env.get("NOMA_SANDBOX_BWRAP") or None,
            slots=int(env.get("NOMA_SANDBOX_SLOTS", base.slots)),
            uid_base=int(env.get("NOMA_SANDBOX_UID_BASE", base.uid_base)),
            lock_dir=Path(env.get("NOMA_SANDBOX_LOCK_DIR", str(base.lock_dir))),
        )
