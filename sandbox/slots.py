"""Unprivileged uids for concurrent runs, one per slot, reserved across processes.

Two sandboxes under one uid can signal and ptrace each other and share ``RLIMIT_NPROC``;
so each concurrently running sandbox gets its own uid. Several servers may run on one host
(tests start several), so uids are reserved with ``flock`` on a lock file per uid: a
reservation dies with the process that held it, never leaving a stale claim behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import tempfile
from pathlib import Path


class SlotsUnavailable(RuntimeError):
    pass


class UidSlots:
    def __init__(self, *, base: int, span: int, count: int, lock_dir: Path) -> None:
        self._base = base
        self._span = span
        self._count = count
        self._lock_dir = lock_dir
        self._fds: list[int] = []
        self.uids: list[int] = []
        self._free: asyncio.Queue[int] | None = None

    def reserve(self) -> list[int]:
        lock_dir = self._prepare_lock_dir()
        for uid in range(self._base, self._base + self._span):
            if len(self.uids) == self._count:
                break
            fd = os.open(lock_dir / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._fds.append(fd)
            self.uids.append(uid)
        if len(self.uids) < self._count:
            self.release_all()
            raise SlotsUnavailable(f"fewer than {self._count} free sandbox uids from {self._base}")
        self._free = asyncio.Queue()
        for uid in self.uids:
            self._free.put_nowait(uid)
        return self.uids

    def _prepare_lock_dir(self) -> Path:
        for candidate in (self._lock_dir, Path(tempfile.gettempdir()) / "noma-sandbox-locks"):
            try:
                candidate.mkdir(mode=0o700, parents=True, exist_ok=True)
                st = candidate.stat()
                if st.st_uid == os.geteuid() and not st.st_mode & 0o022:
                    return candidate
            except OSError:
                continue
        raise SlotsUnavailable("no private directory for sandbox uid locks")

    async def acquire(self) -> int:
        assert self._free is not None, "reserve() first"
        return await self._free.get()

    def release(self, uid: int) -> None:
        assert self._free is not None
        self._free.put_nowait(uid)

    def release_all(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        self.uids.clear()
