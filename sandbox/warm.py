"""Launchers started ahead of time, one per idle slot, each blocked reading its request.

Starting an interpreter is most of a run's cost (~10 ms of a ~25 ms run here). A launcher
does nothing run-specific until its request arrives — no namespace, no uid, no cgroup —
so starting it early is safe: every run still gets a process of its own that did not
exist before the previous run ended, and that process is gone after the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable

CONTROL_LINE_LIMIT = 4 * 1024 * 1024

Process = asyncio.subprocess.Process


LaunchSpec = tuple[list[str], list[int]]


async def spawn(spec: Callable[[], LaunchSpec]) -> Process:
    """Start a launcher; the fds of its spec are handed to it and closed here after."""
    argv, fds = spec()
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},
            start_new_session=True,
            close_fds=True,
            pass_fds=fds,
            limit=CONTROL_LINE_LIMIT,
        )
    finally:
        for fd in fds:
            os.close(fd)


class WarmLaunchers:
    """One launcher per slot, started while the slot is idle (see the module docstring)."""

    def __init__(self, argv_for: Callable[[int], LaunchSpec]) -> None:
        self._argv_for = argv_for
        self._pending: dict[int, asyncio.Future[Process]] = {}
        self._closed = False

    def prepare(self, slot: int) -> None:
        """Start the next launcher for ``slot`` in the background."""
        if not self._closed and slot not in self._pending:
            self._pending[slot] = asyncio.ensure_future(
                spawn(functools.partial(self._argv_for, slot))
            )

    async def take(self, slot: int) -> Process:
        """The slot's warm launcher if it started fine, else a fresh one started now."""
        pending = self._pending.pop(slot, None)
        if pending is not None:
            try:
                proc = await pending
            except OSError:
                proc = None
            if proc is not None:
                if proc.returncode is None:
                    return proc
                await proc.wait()
        return await spawn(functools.partial(self._argv_for, slot))

    async def close(self) -> None:
        """Let idle launchers exit (EOF on their request pipe) and reap them."""
        self._closed = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            try:
                proc = await future
            except OSError:
                continue
            await _retire(proc)


async def _retire(proc: Process) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.communicate(), 5)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
