"""Serving under slow and greedy clients: header and body deadlines, a connection cap, an
fd limit that is not the first thing to run out, and logs that cannot be flooded.

A client that opens a connection and never finishes its request head holds a file
descriptor for as long as it likes on a stock uvicorn (the keep-alive timer starts only
after a first response); about a thousand of them exhaust the default limit of 1,024
descriptors and the token holder's requests time out, all before any token is read. So:

- every connection must deliver a complete request head within ``HEADER_TIMEOUT`` seconds
  of opening (and of its previous response), else it is closed, unanswered and unlogged;
- a request body that stalls for ``BODY_TIMEOUT`` seconds between two reads ends the
  request as a disconnect (the route stops reading; nothing is half-applied);
- more than ``MAX_CONNECTIONS`` open connections: the next ones are closed at once (only
  admitted connections count: a burst of refused ones is not a full server);
- more than ``MAX_PER_CLIENT`` open connections from one peer (an IPv4 address, an IPv6
  /64, all Unix-socket peers together): that peer's next ones are closed at once, so one
  address cannot take the whole global cap from everyone else. It applies to loopback
  peers too (another local user is loopback); the owner's own tools never need hundreds of
  connections at once. Behind a reverse proxy on the same host every client is the proxy's
  address: raise it there (``NOMA_SERVER_MAX_PER_CLIENT``) and let the proxy, which sees
  the real addresses, enforce per-client limits;
- the soft ``RLIMIT_NOFILE`` is raised toward the hard limit at start;
- each server logger passes at most ``LOG_BURST`` lines per second; the rest are counted
  and reported in one line.

The values can be changed with ``NOMA_SERVER_HEADER_TIMEOUT``, ``NOMA_SERVER_BODY_TIMEOUT``,
``NOMA_SERVER_MAX_CONNECTIONS`` and ``NOMA_SERVER_MAX_PER_CLIENT``. A public hub should still
sit behind a reverse proxy (README: Running a team hub), which buffers slow clients before
they reach Python.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import resource
import socket
import sys
import time
from collections import Counter
from typing import Any
from weakref import WeakKeyDictionary

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


HEADER_TIMEOUT = _env_float("NOMA_SERVER_HEADER_TIMEOUT", 10.0)
BODY_TIMEOUT = _env_float("NOMA_SERVER_BODY_TIMEOUT", 30.0)
MAX_CONNECTIONS = int(_env_float("NOMA_SERVER_MAX_CONNECTIONS", 4096))
MAX_PER_CLIENT = int(_env_float("NOMA_SERVER_MAX_PER_CLIENT", 256))
LOG_BURST = 20
WANTED_FDS = 16384


def peer_key(client: tuple[str, int] | None) -> str:
    """The unit a per-client cap counts: an IPv4 address, an IPv6 /64 (one host commonly
    holds a whole /64, so counting single IPv6 addresses would be no cap), or ``"unix"``."""
    if client is None:
        return "unix"
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return client[0]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class _Admitted:
    """The connections a running server has let in: a total and one count per peer. A
    refused connection is never counted: it stays in uvicorn's own connection set until
    its ``connection_lost`` runs a loop turn later, and a burst of refusals counted there
    would fill the global cap and turn away another peer's first connection."""

    __slots__ = ("per_peer", "total")

    def __init__(self) -> None:
        self.total = 0
        self.per_peer: Counter[str] = Counter()

    def admit(self, peer: str) -> bool:
        if self.per_peer[peer] >= MAX_PER_CLIENT or self.total >= MAX_CONNECTIONS:
            return False
        self.per_peer[peer] += 1
        self.total += 1
        return True

    def release(self, peer: str) -> None:
        self.total -= 1
        self.per_peer[peer] -= 1
        if self.per_peer[peer] <= 0:
            del self.per_peer[peer]


# What each running server has admitted.
_ADMITTED: WeakKeyDictionary[ServerState, _Admitted] = WeakKeyDictionary()


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline, a connection cap and a cap per
    peer."""

    _head_timer: asyncio.TimerHandle | None = None
    _peer: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = peer_key(self.client)
        if not _ADMITTED.setdefault(self.server_state, _Admitted()).admit(peer):
            # Over the global cap, or this peer holds its share already (the others keep
            # theirs): closed before a byte is read, nothing to answer, nothing logged.
            transport.abort()
            return
        self._peer = peer
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(HEADER_TIMEOUT, self._head_timeout)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle and self.cycle is not None:
            self._disarm()  # a complete head arrived: the route has it now

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next head is due in time too (keep-alive closes idle ones)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            admitted = _ADMITTED.get(self.server_state)
            if admitted is not None:
                admitted.release(self._peer)
            self._peer = None
        super().connection_lost(exc)


class BodyDeadline:
    """ASGI middleware: a request body that stalls between reads is a disconnect."""

    def __init__(self, app: ASGIApp, timeout: float = BODY_TIMEOUT) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def guarded() -> Message:
            try:
                return await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                return {"type": "http.disconnect"}

        await self.app(scope, guarded, send)


class RateLimit(logging.Filter):
    """At most ``burst`` records per second through one logger; the rest are counted and
    reported on the next record that passes (a flood is one line, not six hundred thousand)."""

    def __init__(self, burst: int = LOG_BURST) -> None:
        super().__init__()
        self.burst = burst
        self.second = 0
        self.passed = 0
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = int(time.monotonic())
        if now != self.second:
            self.second, self.passed = now, 0
        if self.passed >= self.burst:
            self.dropped += 1
            return False
        self.passed += 1
        if self.dropped:
            record.msg = f"{record.msg} ({self.dropped} similar lines suppressed)"
            self.dropped = 0
        return True


def raise_fd_limit(wanted: int = WANTED_FDS) -> int:
    """Raise the soft descriptor limit toward ``wanted`` (never past the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


class _Announcing(uvicorn.Server):
    """A uvicorn server that says where it listens once it does, whatever the log level:
    with ``--port 0`` the system picks a free port, and this line is how a script (or a
    test) learns it without racing other processes for a number it chose itself."""

    def __init__(self, config: uvicorn.Config, name: str) -> None:
        super().__init__(config)
        self.name = name

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        for server in self.servers:
            for sock in server.sockets:
                url = listening_url(sock)
                print(f"{self.name}: listening on {url}", file=sys.stderr, flush=True)


def listening_url(sock: socket.socket) -> str:
    """``http://host:port`` of a listening socket, IPv6 hosts in brackets."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def run(
    app: ASGIApp, host: str, port: int, log_level: str, *, name: str = "noma serve", **extra: Any
) -> None:
    """Serve ``app`` as ``noma serve`` and ``noma skills serve`` (``name``) do."""
    raise_fd_limit()
    config = uvicorn.Config(
        BodyDeadline(app),
        host=host,
        port=port,
        log_level=log_level,
        http=GuardedH11,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=32 * 1024,
        **extra,
    )
    server = _Announcing(config, name)
    for logger in ("uvicorn.error", "uvicorn.access", "noma.skills.rpc"):
        logging.getLogger(logger).addFilter(RateLimit())
    server.run()
