"""Fixtures for sandbox tests: one started ``Sandbox`` per isolation tier this host has.

Tiers that need a capability the host lacks are skipped with the reason (bubblewrap not
installed; not root). Every test module ends by checking that nothing was left behind:
no process of a sandbox uid, no sandbox mounts in the host namespace, no cgroups.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from sandbox import Sandbox, SandboxConfig
from sandbox.procs import pids_of_uid

# Not the server default, so tests never touch a real server's uids; and one range per test
# session, so the leak checks below see this run's processes only, never those of another
# suite running on the same host.
UID_BASE = 2_100_000_000 + (os.getpid() % 4096) * 64
IS_ROOT = os.geteuid() == 0
BWRAP = os.environ.get("NOMA_SANDBOX_BWRAP") or shutil.which("bwrap")


def tier_params() -> list[object]:
    reason_root = "needs root: the sandbox drops to per-slot uids and builds namespaces"
    return [
        pytest.param("namespaces", marks=pytest.mark.skipif(not IS_ROOT, reason=reason_root)),
        pytest.param(
            "bubblewrap",
            marks=pytest.mark.skipif(
                not (IS_ROOT and BWRAP), reason="bubblewrap (bwrap) is not installed on this host"
            ),
        ),
        pytest.param("degraded", marks=pytest.mark.skipif(not IS_ROOT, reason=reason_root)),
    ]


def config_for(tier: str, **limits: float) -> SandboxConfig:
    cfg = SandboxConfig(
        tier=tier,  # type: ignore[arg-type]
        allow_degraded=True,
        bwrap=BWRAP,
        slots=2,
        uid_base=UID_BASE,
        lock_dir=Path("/run/noma-sandbox-tests"),
    )
    return cfg.with_limits(**limits) if limits else cfg


@pytest.fixture(params=tier_params())
async def sandbox(request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    box = Sandbox(config_for(request.param, timeout_s=10.0))
    await box.start()
    assert box.unavailable_reason is None, box.unavailable_reason
    assert box.tier == request.param
    try:
        yield box
    finally:
        await box.close()
        assert_nothing_left(box)


def sandbox_processes() -> list[int]:
    found: list[int] = []
    for uid in range(UID_BASE, UID_BASE + 64):
        found += pids_of_uid(uid)
    return found


def assert_nothing_left(box: Sandbox | None = None) -> None:
    assert sandbox_processes() == [], "processes of sandbox uids survived"
    with open("/proc/self/mountinfo") as fh:
        mounts = fh.read()
    assert "noma-sandbox" not in mounts, "a sandbox mount leaked into the host namespace"
    for controller in ("memory", "pids"):
        base = Path("/sys/fs/cgroup") / controller
        if base.is_dir():
            leftovers = _own_cgroups(base)
            assert leftovers == [], f"cgroups left behind: {leftovers}"


def _own_cgroups(base: Path) -> list[str]:
    """This process's sandbox cgroups anywhere under ``base``. Another test process's
    groups appear and vanish while this walks (pytest-xdist): a folder gone under the walk
    is skipped, and no sandbox's own groups are entered."""
    prefix = f"noma-sandbox-{os.getpid()}-"
    found: list[str] = []
    for folder, names, _ in os.walk(base, onerror=lambda _error: None):
        found += [os.path.join(folder, n) for n in names if n.startswith(prefix)]
        names[:] = [n for n in names if not n.startswith("noma-sandbox-")]
    return found


@pytest.fixture(scope="module", autouse=True)
def _module_leaves_nothing() -> Iterator[None]:
    yield
    if IS_ROOT:
        assert sandbox_processes() == []
