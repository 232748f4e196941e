"""Which isolation tier to use, strongest first, and the bubblewrap command line.

1. ``bubblewrap`` — bwrap builds the namespaces and the filesystem (run as root without a
   user namespace; the launcher inside drops to the slot uid, because bwrap's own
   ``--uid`` inside a user namespace maps back to host root).
2. ``namespaces`` — the launcher does the same with ``unshare``/``mount``/``pivot_root``.
3. ``degraded`` — plain process, rlimits and the slot uid; no network isolation, so it is
   refused unless explicitly allowed, and it never carries secrets.
Each tier is only used after a probe run on it succeeds (see ``Sandbox.start``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sandbox.config import SandboxConfig, TierName

ORDER: tuple[TierName, ...] = ("bubblewrap", "namespaces", "degraded")


class TierUnavailable(RuntimeError):
    pass


def find_bwrap(config: SandboxConfig) -> str | None:
    if config.bwrap:
        return config.bwrap if os.access(config.bwrap, os.X_OK) else None
    return shutil.which("bwrap")


def choose_tiers(config: SandboxConfig, *, is_root: bool) -> list[TierName]:
    """Candidate tiers to probe, in order; a forced tier is the only candidate."""
    if config.tier != "auto":
        return [config.tier]
    if not is_root:
        return ["degraded"]
    tiers: list[TierName] = []
    if find_bwrap(config):
        tiers.append("bubblewrap")
    tiers += ["namespaces", "degraded"]
    return tiers


def _etc_dir(scratch: Path, uid: int) -> Path:
    """Generated /etc files for one slot (bwrap binds the directory read-only)."""
    etc = scratch / f"etc-{uid}"
    if not etc.exists():
        tmp = scratch / f".etc-{uid}.tmp"
        tmp.mkdir(mode=0o755)
        (tmp / "passwd").write_text(
            f"root:x:0:0::/root:/bin/false\nsandbox:x:{uid}:{uid}::/workspace:/bin/false\n"
        )
        (tmp / "group").write_text(f"root:x:0:\nsandbox:x:{uid}:\n")
        (tmp / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
        (tmp / "hostname").write_text("sandbox\n")
        for p in tmp.iterdir():
            p.chmod(0o644)
        tmp.rename(etc)
    return etc


def bubblewrap_args(
    config: SandboxConfig, guest_dir: Path, scratch: Path, uid: int, skills_fd: int
) -> list[str]:
    """The whole sandbox of one run on a slot, built before the run is known.

    Nothing here depends on the run: its skills reach the launcher inside through the
    inherited socket ``skills_fd`` as directory fds (see ``isolate._receive_skill_dirs``),
    so the sandbox can be started ahead of the call (``sandbox/warm.py``).
    """
    bwrap = find_bwrap(config)
    if bwrap is None:
        raise TierUnavailable("bubblewrap is not installed")
    limits = config.limits
    args = [
        bwrap,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        # bwrap creates missing mount points like their source's parent (0700 for a
        # private tmp dir); make the ones the slot uid must traverse explicitly.
        "--perms",
        "0755",
        "--dir",
        "/etc",
        "--perms",
        "0755",
        "--size",
        str(config.limits.skills_bytes),
        "--tmpfs",
        "/skills",
        "--perms",
        "0755",
        "--dir",
        "/opt",
    ]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    etc = _etc_dir(scratch, uid)
    for p in sorted(etc.iterdir()):
        args += ["--ro-bind", str(p), f"/etc/{p.name}"]
    for name in ("ld.so.cache", "localtime", "alternatives", "python3.11"):
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(limits.tmp_bytes),
        "--tmpfs",
        "/tmp",
        "--perms",
        "1777",
        "--size",
        str(limits.tmp_bytes),
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "0700",
        "--size",
        str(limits.workspace_bytes),
        "--tmpfs",
        "/workspace",
    ]
    args += [
        "--ro-bind",
        str(guest_dir),
        "/opt/noma",
        "--remount-ro",
        "/",
        "--chdir",
        "/workspace",
        "--",
        config.python,
        "-I",
        "-S",
        "/opt/noma/launcher.py",
        "--skills-fd",
        str(skills_fd),
    ]
    return args
