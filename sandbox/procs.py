"""Finding and ending sandbox processes by parentage and by uid, read straight from /proc.

Why not ``killpg``: sandboxed code can ``setsid()`` out of its process group. It cannot
leave its pid namespace, its cgroup or its uid, so cleanup works on those instead. And why
children first: this machine's pid 1 does not reap orphans, so a process is only killed
while its parent is alive to reap it — a killed parent would leave zombies behind forever.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable


def _stat_fields(pid: str) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; fields resume after the last ')'.
    return raw[raw.rfind(b")") + 2 :].decode().split()


def children_of(parent: int) -> list[int]:
    """Direct children of ``parent`` (state and ppid are fields 3 and 4 of /proc/pid/stat)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(entry)
            if fields is not None and int(fields[1]) == parent:
                kids.append(int(entry))
    return kids


def pids_of_uid(uid: int) -> list[int]:
    """Every process whose real uid is ``uid`` (zombies included)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(int(entry))
                        break
        except (OSError, ValueError):
            continue
    return found


def kill_all(pids: Iterable[int], sig: int = signal.SIGKILL) -> int:
    count = 0
    for pid in pids:
        try:
            os.kill(pid, sig)
            count += 1
        except (ProcessLookupError, PermissionError):
            continue
    return count


def kill_children(parent: int) -> int:
    """Stop ``parent`` so it cannot fork, SIGKILL its children, let it run on to reap them."""
    try:
        os.kill(parent, signal.SIGSTOP)
    except ProcessLookupError:
        return 0
    try:
        return kill_all(children_of(parent))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(parent, signal.SIGCONT)


def is_alive(pid: int) -> bool:
    fields = _stat_fields(str(pid))
    return fields is not None and fields[0] != "Z"
