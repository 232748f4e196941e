"""``noma trust [PATH]``, ``noma trust --list``, ``noma untrust PATH``, and the lines other
commands print about an untrusted folder.

``noma trust`` shows what trusting will turn on (every covered setting the folder has, URLs
without their passwords, and what else it ships), asks, then records the folder in the
user's trust store (`core.trust`). ``--yes`` skips the question for scripts; without a
terminal and without ``--yes`` nothing is recorded.

Exit codes: ``trust`` 0 trusted, 1 declined (or no terminal to ask on), 2 not a folder or
the trust store cannot be used; ``untrust`` 0 forgotten, 1 was not trusted, 2 as above;
``--list`` 0. Commands that would use an untrusted setting print a ``workspace_untrusted``
line naming ``noma trust PATH`` and go on with the setting off (their exit code is their
own); ``noma serve`` and ``noma skills serve`` refuse an untrusted folder with exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..noma.visible import visible_line
from ..workspace import WORKSPACE_UNTRUSTED, Workspace, trust_command

if TYPE_CHECKING:
    from ..trust import TrustStore


def shown(text: str) -> str:
    """A path or value from a folder, safe to print (no control characters reach the tty)."""
    return visible_line(text)


def untrusted_notice(workspace: Workspace) -> str | None:
    """A line for stderr when the folder asks for something trust keeps off, else None."""
    from ..trust import restrictions

    if workspace.trusted:
        return None
    off = restrictions(workspace.root, workspace.config)
    if not off:
        return None
    if workspace.trust.state == "changed":
        why = f"settings changed since you trusted it ({', '.join(workspace.trust.changed)})"
    else:
        why = "not trusted"
    return (
        f"{WORKSPACE_UNTRUSTED}: {shown(str(workspace.root))}: {why}; off: "
        f"{'; '.join(shown(line) for line in off)}. To trust it: {trust_command(workspace.root)}"
    )


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "trust", help="trust a workspace folder: its hub, store, secrets, gates and skills apply"
    )
    p.add_argument("path", nargs="?", default=".", help="the folder (default: current)")
    p.add_argument("--yes", action="store_true", help="do not ask (for scripts)")
    p.add_argument("--list", action="store_true", help="list trusted folders and their state")
    p.set_defaults(func=cmd_trust)

    p = subparsers.add_parser("untrust", help="forget that a workspace folder is trusted")
    p.add_argument("path")
    p.set_defaults(func=cmd_untrust)


def _describe(workspace: Workspace) -> list[str]:
    from ..trust import summary

    return [shown(line) for line in summary(workspace.root, workspace.config, workspace.trust)]


def cmd_trust(args: argparse.Namespace) -> int:
    from ..trust import TrustStore, TrustStoreError
    from ..workspace import Workspace, WorkspaceError

    store = TrustStore()
    if args.list:
        return _list(store)
    try:
        workspace = Workspace.open(Path(args.path))
    except WorkspaceError as exc:
        print(f"noma trust: {shown(str(exc))}", file=sys.stderr)
        return 2
    root = shown(str(workspace.root))
    if workspace.trusted:
        print(f"{root}: already trusted with these settings")
        return 0
    print(f"{root}: {workspace.trust.state.value}")
    for line in _describe(workspace):
        print(shown(line))
    if not args.yes:
        if not sys.stdin.isatty():
            print("noma trust: not a terminal: nothing recorded (use --yes)", file=sys.stderr)
            return 1
        answer = input("Trust this folder with these settings? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("not trusted")
            return 1
    try:
        store.trust(workspace.root, workspace.config)
    except (TrustStoreError, OSError) as exc:
        code = getattr(exc, "code", "trust_store_unsafe")
        print(f"noma trust: {code}: {shown(str(exc))}", file=sys.stderr)
        return 2
    print(f"trusted {root}")
    return 0


def _list(store: TrustStore) -> int:
    from ..trust import TrustStoreError
    from ..workspace import Workspace, WorkspaceError

    try:
        entries = store.entries()
    except TrustStoreError as exc:
        print(f"noma trust: {exc.code}: {shown(str(exc))}", file=sys.stderr)
        return 2
    for entry in entries:
        try:
            state = Workspace.open(entry.path).trust.state.value
        except WorkspaceError:
            state = "missing"
        print(f"{shown(entry.path)}  {state}  trusted {entry.trusted_at}")
    return 0


def cmd_untrust(args: argparse.Namespace) -> int:
    from ..trust import TrustStore, TrustStoreError

    root = Path(args.path).expanduser().resolve()
    try:
        removed = TrustStore().untrust(root)
    except TrustStoreError as exc:
        print(f"noma untrust: {exc.code}: {shown(str(exc))}", file=sys.stderr)
        return 2
    if not removed:
        print(f"noma untrust: {shown(str(root))} was not trusted", file=sys.stderr)
        return 1
    print(f"untrusted {shown(str(root))}")
    return 0
