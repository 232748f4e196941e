"""The real servers (``noma serve``, ``noma skills serve``) started on a port they choose.

A test that picks a free port itself (bind port 0, close, hand the number over) races every
other process on the host for it between the close and the server's bind: two suites at
once on one machine lost that race (``[Errno 98] address already in use``). So the server
binds port 0 itself and names the port it got on stderr (``<command>: listening on
http://HOST:PORT``, `core.netauth.serving`), and `launch` reads that line.

The server's stderr is read to its end by a thread, line by line into `Served.lines`: a
server that logs a lot can never block on a full pipe, and a failing test can show it all.
"""

from __future__ import annotations

import queue
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

LISTENING = re.compile(r": listening on http://(?:\[[^\]]+\]|[^:/\s]+):(\d+)$")


@dataclass
class Served:
    """A started server: its process, the port it listens on, its stderr so far."""

    proc: subprocess.Popen[bytes]
    port: int
    lines: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The server on loopback (it may listen on every address too)."""
        return f"http://127.0.0.1:{self.port}"

    def stderr_text(self) -> str:
        return "".join(self.lines)


def launch(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdout: int | None = subprocess.DEVNULL,
    preexec_fn: Callable[[], None] | None = None,
    timeout: float = 60.0,
) -> Served:
    """Start ``argv`` with ``--port 0`` and wait until it says where it listens."""
    proc = subprocess.Popen(
        [*argv, "--port", "0"],
        cwd=cwd,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=preexec_fn,
    )
    served = Served(proc, 0)
    ports: queue.Queue[int | None] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace")
            served.lines.append(line)
            found = LISTENING.search(line.rstrip("\n"))
            if found is not None:
                ports.put(int(found[1]))
        ports.put(None)  # the stream ended: the server exited

    threading.Thread(target=drain, name="served-stderr", daemon=True).start()
    try:
        port = ports.get(timeout=timeout)
    except queue.Empty:
        proc.kill()
        proc.wait()
        raise AssertionError(
            f"{argv[:5]} did not say where it listens in {timeout} s:\n{served.stderr_text()}"
        ) from None
    if port is None:
        proc.wait()
        raise AssertionError(
            f"{argv[:5]} exited with {proc.returncode} before listening:\n{served.stderr_text()}"
        )
    served.port = port
    return served
