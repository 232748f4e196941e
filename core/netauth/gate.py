"""The one ASGI middleware in front of every HTTP route: Host, token, content type.

Every request, on every surface, passes the same three checks in the same order:

1. ``Host`` names this server (`bind.HostPolicy`), else 421: a DNS-rebound page names its
   own domain, so it is turned away before anything is read.
2. ``Authorization: Bearer <token>`` is the owner's local token (`local_token`) or a live
   hub token (`core.netauth.tokens`), else the one bare 401, identical for a missing, malformed,
   unknown or revoked token. There is no tokenless caller, loopback included: another
   local user is a stranger.
3. A request with a body says ``Content-Type: application/json``, else 415: a browser sends
   ``text/plain`` and form bodies cross-site without asking; JSON it must ask for first
   (a preflight this server never answers).

Only ``GET /openapi.json`` and ``GET /docs`` skip step 2: they describe the routes and hold
no data of the workspace. The caller a token speaks for (`Caller`) is put in the request
scope and in `CURRENT_CALLER` for the handlers below (the hub makes an actor of it, the
Skills runtime a namespace).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .bind import HostPolicy, public_bind_refusal
from .local_token import load_or_create_local_token, same_token
from .tokens import TokenScope, TokenStore

UNAUTHORIZED: dict[str, Any] = {"ok": False, "status": 401, "error": "unauthorized"}
HOST_REFUSED: dict[str, Any] = {"ok": False, "status": 421, "error": "host_not_allowed"}
MEDIA_REFUSED: dict[str, Any] = {"ok": False, "status": 415, "error": "unsupported_media_type"}
PUBLIC_PATHS = frozenset({"/openapi.json", "/docs"})
READ_METHODS = frozenset({"GET", "HEAD"})
SCOPE_KEY = "noma_caller"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request's token speaks for. ``name`` is None for the server's owner (the local
    token): the workspace's own actor, as an agent, as a token-less loopback caller was."""

    name: str | None
    human: bool
    scope: TokenScope

    @property
    def owner(self) -> bool:
        return self.name is None


OWNER = Caller(None, False, "personal")
CURRENT_CALLER: ContextVar[Caller | None] = ContextVar("noma_current_caller", default=None)


def current_caller() -> Caller | None:
    """The authenticated caller of the request being handled (None outside a request)."""
    return CURRENT_CALLER.get()


class Authenticator:
    """Turns an ``Authorization`` header into a `Caller`, or None (a bare 401)."""

    def __init__(self, tokens: TokenStore, local_token: str | None) -> None:
        self.tokens = tokens
        self.local_token = local_token

    def verify_local(self, authorization: str | None) -> Caller | None:
        """`OWNER` if the header carries the local token (no I/O), else None."""
        presented = bearer(authorization)
        if presented is None or self.local_token is None:
            return None
        return OWNER if same_token(presented, self.local_token) else None

    def verify(self, authorization: str | None) -> Caller | None:
        presented = bearer(authorization)
        if presented is None:
            return None
        if self.local_token is not None and same_token(presented, self.local_token):
            return OWNER
        token = self.tokens.verify(presented)
        return None if token is None else Caller(token.name, token.human, token.scope)


def bearer(authorization: str | None) -> str | None:
    """The token an ``Authorization`` header presents: ``Bearer <token>``, or HTTP Basic
    with the token as the password (any user name), so a client that reads credentials
    from ``~/.netrc`` (``requests``, ``curl --netrc``) needs no code change."""
    if authorization is None:
        return None
    scheme, _, presented = authorization.partition(" ")
    presented = presented.strip()
    if not presented or len(presented) > 512:
        return None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(presented, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        _, colon, password = decoded.partition(":")
        return password if colon and password else None
    return presented if scheme.lower() == "bearer" else None


def _one(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> tuple[int, str | None]:
    """How many times header ``name`` occurs, and its value when it occurs once."""
    values = [v for k, v in headers if k == name]
    if len(values) != 1:
        return len(values), None
    return 1, values[0].decode("latin-1")


def _json_media(content_type: str) -> bool:
    media, _, params = content_type.partition(";")
    if media.strip().lower() != "application/json":
        return False
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip('"').lower() != "utf-8":
            return False
    return True


def _has_body(headers: list[tuple[bytes, bytes]]) -> bool:
    if any(k == b"transfer-encoding" for k, _ in headers):
        return True
    lengths = [v for k, v in headers if k == b"content-length"]
    return any(v.strip() not in (b"", b"0") for v in lengths)


class AuthGate:
    """ASGI middleware: every HTTP request is checked before any route sees it."""

    def __init__(self, app: ASGIApp, auth: Authenticator, hosts: HostPolicy) -> None:
        self.app = app
        self.auth = auth
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket route exists; none is opened
            await send({"type": "websocket.close", "code": 1008})
            return
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers", ()))
        count, host = _one(headers, b"host")
        if count != 1 or not self.hosts.allows(host):
            await _answer(scope, receive, send, HOST_REFUSED, 421)
            return
        method = scope["method"]
        if scope["path"] in PUBLIC_PATHS and method in READ_METHODS:
            await self.app(scope, receive, send)
            return
        count, authorization = _one(headers, b"authorization")
        caller = None
        if count == 1:
            caller = self.auth.verify_local(authorization)
            if caller is None:  # a hub token: a lookup in its table, off the event loop
                caller = await run_in_threadpool(self.auth.verify, authorization)
        if caller is None:
            await _answer(scope, receive, send, UNAUTHORIZED, 401, {"WWW-Authenticate": "Bearer"})
            return
        if method not in READ_METHODS:
            count, ctype = _one(headers, b"content-type")
            json_body = count == 1 and ctype is not None and _json_media(ctype)
            if not json_body and (count > 0 or _has_body(headers)):
                await _answer(scope, receive, send, MEDIA_REFUSED, 415)
                return
        scope.setdefault("state", {})[SCOPE_KEY] = caller
        reset = CURRENT_CALLER.set(caller)
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT_CALLER.reset(reset)


async def _answer(
    scope: Scope,
    receive: Receive,
    send: Send,
    body: dict[str, Any],
    status: int,
    headers: dict[str, str] | None = None,
) -> None:
    await JSONResponse(body, status_code=status, headers=headers)(scope, receive, send)


def caller_in(scope: Scope) -> Caller | None:
    value = scope.get("state", {}).get(SCOPE_KEY)
    return value if isinstance(value, Caller) else None


class BindRefused(ValueError):
    """A server was asked to listen where others can reach it, with no token for them."""


def protect(app: ASGIApp, root: Path, bind_host: str, allow_hosts: Iterable[str] = ()) -> AuthGate:
    """``app`` behind the gate, as ``noma skills serve`` runs it: the hub tokens of the
    workspace at ``root`` and the owner's local token (made now if there is none)."""
    tokens = TokenStore.for_workspace(root)
    refused = public_bind_refusal("refused", bind_host, tokens.active_count())
    if refused is not None:
        raise BindRefused(refused.removeprefix("refused: "))
    local = load_or_create_local_token()
    return AuthGate(app, Authenticator(tokens, local), HostPolicy.for_bind(bind_host, allow_hosts))
