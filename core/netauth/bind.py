"""Which addresses a server listens on, and which ``Host`` names it answers.

A page in the user's browser can make its own name resolve to 127.0.0.1 (DNS rebinding)
and then talk to a loopback server as a same-origin page; the only thing that gives it
away is the ``Host`` header, which names the page's domain. So a server answers only the
names it is reached by: the loopback names, the address it is bound to, and names the
operator lists (``--allow-host``, for a reverse proxy that passes its public name). A server
bound to every address (``0.0.0.0``) with no listed name answers any ``Host``: a public hub
is reached by names it cannot know, and every request there needs a token anyway.
"""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def add_serving_arguments(serve: argparse.ArgumentParser) -> None:
    """The options every HTTP server of the product shares (``noma serve``, ``noma skills
    serve``): the Host names it answers besides its own, and how much it logs."""
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (e.g. a reverse proxy's public name)",
    )
    serve.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name of a ``Host`` header without its port, lowercased (``[::1]:80`` -> ``::1``)."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    name, _, port = value.rpartition(":")
    if name and port.isdigit():
        value = name
    return value.rstrip(".")


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The ``Host`` names a server answers; ``names`` None means any."""

    names: frozenset[str] | None

    @classmethod
    def for_bind(cls, bind_host: str, allow: Iterable[str] = ()) -> HostPolicy:
        extra = {host_name(a) for a in allow if a.strip()}
        bound = host_name(bind_host) if ":" not in bind_host else bind_host.strip("[]").lower()
        if bound in WILDCARDS and not extra:
            return cls(None)
        names = set(LOOPBACK_NAMES) | extra
        if bound not in WILDCARDS:
            names.add(bound)
        return cls(frozenset(names))

    def allows(self, header: str | None) -> bool:
        if header is None:
            return False
        name = host_name(header)
        if not name:
            return False
        return self.names is None or name in self.names


LOOPBACK_ONLY = HostPolicy(frozenset(LOOPBACK_NAMES))


def public_bind_refusal(command: str, host: str, active_tokens: int) -> str | None:
    """Why ``command`` must not listen on ``host`` (a non-loopback address with no hub
    token), or None. The owner's local token reaches only this machine's user, so a server
    others can reach needs a token made for them first."""
    if is_loopback(host) or active_tokens > 0:
        return None
    return (
        f"{command}: refusing to bind {host} without tokens: anyone who can reach it could "
        "run skills and write runs. Create one first: noma hub token create --name NAME"
    )
