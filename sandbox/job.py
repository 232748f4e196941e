"""What a run asks for (``Job``) and what it produced (``Outcome``): plain records.

The sandbox knows nothing about skill stores or JSON-RPC; the caller resolves skills to
directories and hands over a ``Job``. ``Outcome`` is what the sandbox observed, including
which isolation tier ran, so the caller can put it in the run record unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sandbox.config import TierName

RunStatus = Literal["completed", "failed"]


@dataclass(frozen=True)
class SkillMount:
    """A skill directory mounted read-only at ``/skills/<name>`` and importable as
    ``skills.<name>``; ``entrypoint`` is relative to ``path`` (None for instruction skills)."""

    name: str
    path: Path
    entrypoint: str | None = None


@dataclass(frozen=True)
class Job:
    """One run: either call ``export`` of skill ``target``, or run ``code`` and call
    ``entrypoint``. ``args`` must be JSON-serializable."""

    mode: Literal["skill", "code"]
    mounts: tuple[SkillMount, ...] = ()
    target: str | None = None
    export: str = "main"
    code: str | None = None
    entrypoint: str = "main"
    args: Mapping[str, Any] = field(default_factory=dict)
    input_blobs: tuple[str, ...] = ()
    secrets: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float | None = None


@dataclass(frozen=True)
class RunError:
    type: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """What a run did. ``isolation`` is the tier it ran on, or "none" if it never started."""

    status: RunStatus
    isolation: TierName | Literal["none"]
    duration_ms: int
    output: Any = None
    summary: str | None = None
    output_blobs: tuple[str, ...] = ()
    logs_preview: str = ""
    error: RunError | None = None
