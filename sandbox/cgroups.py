"""Per-run cgroups (v1 memory + pids) for an aggregate memory cap and a process cap.

rlimits are per process (``RLIMIT_AS``) or per uid (``RLIMIT_NPROC``); a run that forks 30
children each just under its address-space limit would still take the host's memory. A
memory cgroup caps the run as a whole, and its ``cgroup.procs`` lists every process of the
run even after ``setsid``/double-fork, which makes cleanup exact.

The run cgroups nest under the server's own cgroup so the host's accounting still holds.
When the hierarchy is missing or not writable, ``CgroupRoot.create`` returns None and the
sandbox relies on rlimits alone.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

from sandbox import procs

CONTROLLERS = ("memory", "pids")


def _mount_points() -> dict[str, Path]:
    found: dict[str, Path] = {}
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fstype, _source, options = [*right.split(), "", "", ""][:3]
                if fstype != "cgroup":
                    continue
                mount_point = left.split()[4]
                for opt in options.split(","):
                    if opt in CONTROLLERS and opt not in found:
                        found[opt] = Path(mount_point)
    except OSError:
        pass
    return found


def _own_paths() -> dict[str, str]:
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(","):
                    paths[name] = path
    except OSError:
        pass
    return paths


def _sweep_stale(parent: Path) -> None:
    """Remove the empty cgroups of servers that died without shutting down."""
    with contextlib.suppress(OSError):
        for base in parent.glob("noma-sandbox-*-*"):
            try:
                pid = int(base.name.split("-")[2])
                os.kill(pid, 0)
                continue  # its server is alive
            except ProcessLookupError:
                pass
            except (ValueError, PermissionError):
                continue
            for child in base.iterdir():
                if child.is_dir():
                    with contextlib.suppress(OSError):
                        child.rmdir()
            with contextlib.suppress(OSError):
                base.rmdir()


class RunCgroup:
    """The cgroups of one slot: limits set before a launcher joins, removed at shutdown.

    Why per slot and not per run: moving a process into a cgroup waits for an RCU grace
    period (measured 0.4-40 ms here). A slot's next launcher joins while it is still idle,
    so that wait never lands on a run's critical path."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the memory limit."""
        mem = self.dirs.get("memory")
        if mem is None:
            return 0
        try:
            for line in (mem / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
            return int((mem / "memory.failcnt").read_text())  # older kernels
        except (OSError, ValueError):
            return 0

    def kill_all(self, exclude: int | None = None) -> int:
        """SIGKILL every live process in the group; returns how many were signalled."""
        return procs.kill_all(p for p in self.pids() if p != exclude and procs.is_alive(p))

    def remove(self) -> bool:
        """rmdir every controller dir; retries briefly while exiting tasks still count."""
        ok = True
        for d in self.dirs.values():
            for attempt in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    procs.kill_all(self._dir_pids(d))
                    time.sleep(0.002 * (attempt + 1))
            else:
                ok = False
        return ok

    @staticmethod
    def _dir_pids(d: Path) -> list[int]:
        try:
            return [int(x) for x in (d / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []


class CgroupRoot:
    """A directory per controller, private to this server process, holding run cgroups."""

    def __init__(self, bases: dict[str, Path]) -> None:
        self.bases = bases

    @classmethod
    def create(cls) -> CgroupRoot | None:
        mounts = _mount_points()
        own = _own_paths()
        if not all(c in mounts for c in CONTROLLERS):
            return None
        tag = f"noma-sandbox-{os.getpid()}-{secrets.token_hex(3)}"
        for c in CONTROLLERS:
            _sweep_stale(mounts[c] / own.get(c, "/").lstrip("/"))
        bases: dict[str, Path] = {}
        try:
            for c in CONTROLLERS:
                base = mounts[c] / own.get(c, "/").lstrip("/") / tag
                base.mkdir()
                bases[c] = base
            probe = cls(bases).new_group("probe", memory_bytes=64 * 1024 * 1024, processes=8)
            probe.remove()
        except OSError:
            for base in bases.values():
                with contextlib.suppress(OSError):
                    base.rmdir()
            return None
        return cls(bases)

    def new_group(self, name: str, *, memory_bytes: int, processes: int) -> RunCgroup:
        """A child cgroup with the given caps (one per slot, reused run after run)."""
        dirs = {c: b / name for c, b in self.bases.items()}
        for d in dirs.values():
            d.mkdir(exist_ok=True)
        run = RunCgroup(dirs)
        try:
            mem = dirs["memory"]
            (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
            memsw = mem / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                with contextlib.suppress(OSError):
                    memsw.write_text(str(memory_bytes))
            (dirs["pids"] / "pids.max").write_text(str(processes))
        except OSError:
            run.remove()
            raise
        return run

    def remove(self) -> None:
        for base in self.bases.values():
            for child in list(base.iterdir()) if base.exists() else []:
                if child.is_dir():
                    RunCgroup({"x": child}).remove()
            with contextlib.suppress(OSError):
                base.rmdir()
