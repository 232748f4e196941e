"""Launchers started ahead of time, one per idle slot, each blocked reading its request.

Starting an interpreter is most of a run's cost (~10 ms of a ~25 ms run here). A launcher
does nothing run-specific until its request arrives, so starting it early is safe: every
run still gets a process (and, on the bubblewrap tier, a whole sandbox) of its own that
did not exist before the previous run ended, and that is gone after the run.

On the namespaces and degraded tiers the waiting launcher holds no namespace, no uid and
no run data. On the bubblewrap tier the waiting launcher is already inside its finished
sandbox (namespaces, mounts, the slot's cgroups), as root there, blocked on its request:
bubblewrap and a fresh interpreter cost ~15 ms, which would otherwise be on every call.
The sandbox's shape does not depend on the run; the run's skills arrive at call time as
directory fds over the launcher's own socket (``LaunchSpec.channel``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

CONTROL_LINE_LIMIT = 4 * 1024 * 1024

Process = asyncio.subprocess.Process


@dataclass
class LaunchSpec:
    """How to start one launcher: its command line, the fds it inherits (closed here once
    it started), bytes written to its stdin at once, and the server's end of its skills
    channel (bubblewrap tier)."""

    argv: list[str]
    fds: list[int] = field(default_factory=list)
    preamble: bytes = b""
    channel: socket.socket | None = None


@dataclass
class Launcher:
    """A started launcher and the server's end of its skills channel (if it has one)."""

    proc: Process
    channel: socket.socket | None = None

    def close_channel(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None


async def spawn(spec: Callable[[], LaunchSpec]) -> Launcher:
    """Start a launcher; the fds of its spec are handed to it and closed here after."""
    launch = spec()
    try:
        proc = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},
            start_new_session=True,
            close_fds=True,
            pass_fds=launch.fds,
            limit=CONTROL_LINE_LIMIT,
        )
    except BaseException:
        if launch.channel is not None:
            launch.channel.close()
        raise
    finally:
        for fd in launch.fds:
            os.close(fd)
    launcher = Launcher(proc, launch.channel)
    if launch.preamble:
        assert proc.stdin is not None
        proc.stdin.write(launch.preamble)  # a pipe buffer holds it: no drain needed
    return launcher


class WarmLaunchers:
    """One launcher per slot, started while the slot is idle (see the module docstring)."""

    def __init__(self, argv_for: Callable[[int], LaunchSpec]) -> None:
        self._argv_for = argv_for
        self._pending: dict[int, asyncio.Future[Launcher]] = {}
        self._closed = False

    def prepare(self, slot: int) -> None:
        """Start the next launcher for ``slot`` in the background."""
        if not self._closed and slot not in self._pending:
            self._pending[slot] = asyncio.ensure_future(
                spawn(functools.partial(self._argv_for, slot))
            )

    async def take(self, slot: int) -> Launcher:
        """The slot's warm launcher if it started fine, else a fresh one started now."""
        pending = self._pending.pop(slot, None)
        if pending is not None:
            try:
                launcher: Launcher | None = await pending
            except OSError:
                launcher = None
            if launcher is not None:
                if launcher.proc.returncode is None:
                    return launcher
                launcher.close_channel()
                await launcher.proc.wait()
        return await spawn(functools.partial(self._argv_for, slot))

    async def started(self) -> None:
        """Wait until every launcher asked for has started (or failed to): only then is
        the pool's set of processes and descriptors settled."""
        while pending := [f for f in self._pending.values() if not f.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    async def close(self) -> None:
        """Let idle launchers exit (EOF on their request pipe) and reap them."""
        self._closed = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            try:
                launcher = await future
            except OSError:
                continue
            await _retire(launcher)


async def _retire(launcher: Launcher) -> None:
    proc = launcher.proc
    launcher.close_channel()
    assert proc.stdin is not None
    proc.stdin.close()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.communicate(), 5)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
