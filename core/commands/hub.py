"""``noma serve`` and ``noma hub token create|local|list|revoke``: the hub's commands.

Every ``noma`` call imports this module to build its parser, so it imports only argparse
at module level; the server stack loads inside the handlers.
"""

from __future__ import annotations

import argparse
import sys

from ..netauth.bind import add_serving_arguments


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = subparsers.add_parser(
        "serve", help="serve the team hub: flow runs over REST and the Skills /rpc"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    serve.add_argument(
        "--port",
        type=int,
        default=8080,
        help="TCP port (default 8080; 0: a free one, named on stderr as 'listening on URL')",
    )
    serve.add_argument("--workspace", default=".", help="workspace folder (default: current)")
    serve.add_argument(
        "--require-token",
        action="store_true",
        help="no effect: every caller needs a token (the owner's is found automatically)",
    )
    add_serving_arguments(serve)
    serve.set_defaults(func=_serve)

    hub = subparsers.add_parser("hub", help="team hub administration (tokens)")
    hsub = hub.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    token = hsub.add_parser("token", help="bearer tokens for the hub")
    tsub = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", default=".", help="workspace folder (default: current)")
    common.add_argument("--json", action="store_true", help="print JSON")

    p = tsub.add_parser(
        "create", parents=[common], help="create a token (printed once, only its hash is kept)"
    )
    p.add_argument("--name", required=True, help="the actor the token speaks for")
    p.add_argument("--scope", choices=("personal", "project", "org"), default="personal")
    p.add_argument(
        "--human",
        action="store_true",
        help="a person's token: may approve human reviews and mint consent (default: agent)",
    )
    p.set_defaults(func=_token_create)

    p = tsub.add_parser(
        "local",
        help="print your own server token (made by the first noma serve / skills serve; "
        "the app and clients on this machine find it by themselves)",
    )
    p.set_defaults(func=_token_local)

    p = tsub.add_parser("list", parents=[common], help="list tokens (never the tokens)")
    p.set_defaults(func=_token_list)

    p = tsub.add_parser("revoke", parents=[common], help="revoke a token by its id")
    p.add_argument("token_id")
    p.set_defaults(func=_token_revoke)


def is_loopback(host: str) -> bool:
    from core.netauth.bind import is_loopback as loopback

    return loopback(host)


def _tokens(args: argparse.Namespace) -> object:
    from pathlib import Path

    from core.flow.context import looks_like_workspace
    from core.netauth.tokens import TokenStore
    from core.workspace import Workspace, WorkspaceError

    workspace = Workspace.open(Path(args.workspace))
    if not looks_like_workspace(workspace):  # write nothing into a folder that is not one
        raise WorkspaceError(
            f"{workspace.root}: not a workspace (no noma-workbench.toml and no flows/)"
        )
    return TokenStore.for_workspace(workspace.root)  # the user's state dir, never the folder


def _token_create(args: argparse.Namespace) -> int:
    import json

    from core.netauth.tokens import TokenError, TokenStore
    from core.workspace import WorkspaceError

    try:
        store = _tokens(args)
        assert isinstance(store, TokenStore)
        token, row = store.create(args.name, args.scope, human=args.human)
    except (TokenError, WorkspaceError) as exc:
        _err(f"noma hub token create: {exc}")
        return 2
    if args.json:
        print(json.dumps({**row.to_json(), "token": token}))
    else:
        print(token)
        print(
            f"token {row.token_id} for {visible_line(row.name)} ({row.scope}, "
            f"{'human' if row.human else 'agent'}): shown once, keep it secret",
            file=sys.stderr,
        )
    return 0


def _token_local(args: argparse.Namespace) -> int:
    from core.netauth.local_token import read_local_token, token_path

    token = read_local_token()
    if token is None:
        print(
            f"noma hub token local: no server token at {token_path()} (start noma serve first)",
            file=sys.stderr,
        )
        return 2
    print(token)
    return 0


def _token_list(args: argparse.Namespace) -> int:
    import json

    from core.netauth.tokens import TokenStore
    from core.workspace import WorkspaceError

    try:
        store = _tokens(args)
    except WorkspaceError as exc:
        _err(f"noma hub token list: {exc}")
        return 2
    assert isinstance(store, TokenStore)
    rows = store.list()
    if args.json:
        print(json.dumps({"tokens": [r.to_json() for r in rows]}))
        return 0
    for r in rows:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "active"
        kind = "human" if r.human else "agent"
        name = visible_line(r.name)
        print(f"{r.token_id}  {name}  {r.scope}  {kind}  created {r.created_at}  {state}")
    return 0


def _token_revoke(args: argparse.Namespace) -> int:
    from core.netauth.tokens import TokenError, TokenStore
    from core.workspace import WorkspaceError

    try:
        store = _tokens(args)
        assert isinstance(store, TokenStore)
        row = store.revoke(args.token_id)
    except (TokenError, WorkspaceError) as exc:
        _err(f"noma hub token revoke: {exc}")
        return 2
    print(f"revoked {row.token_id} ({visible_line(row.name)})")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from pathlib import Path

    from core.flow.context import looks_like_workspace
    from core.hub.app import Hub, create_hub_app
    from core.netauth import serving
    from core.netauth.bind import HostPolicy, public_bind_refusal
    from core.netauth.local_token import load_or_create_local_token, token_path
    from core.skills_runtime.app import create_app
    from core.skills_runtime.service import SkillsRuntime
    from core.workspace import Workspace, WorkspaceError, untrusted_refusal

    try:
        workspace = Workspace.open(Path(args.workspace))
    except WorkspaceError as exc:
        _err(f"noma serve: {exc}")
        return 2
    if not looks_like_workspace(workspace):
        print(
            f"noma serve: {workspace.root}: not a workspace (no noma-workbench.toml and no flows/)",
            file=sys.stderr,
        )
        return 2
    refusal = untrusted_refusal(workspace)
    if refusal is not None:
        print(f"noma serve: {refusal}", file=sys.stderr)
        return 2
    try:
        hub = Hub.open(workspace.root)
    except OSError as exc:  # the run store (e.g. PostgreSQL unreachable); never its URL
        _err(f"noma serve: {exc}")
        return 2
    refused = public_bind_refusal("noma serve", args.host, hub.tokens.active_count())
    if refused is not None:
        print(refused, file=sys.stderr)
        hub.close()
        return 2
    try:
        local = load_or_create_local_token()
    except OSError as exc:
        print(f"noma serve: {exc}", file=sys.stderr)
        hub.close()
        return 2
    try:
        runtime = SkillsRuntime(workspace.root)
    except ValueError as exc:
        _err(f"noma serve: {exc}")
        hub.close()
        return 2
    hosts = HostPolicy.for_bind(args.host, args.allow_host)
    app = create_hub_app(hub, create_app(runtime), hosts=hosts, local_token=local)
    print(f"noma serve: your token is in {token_path()} (noma hub token local)", file=sys.stderr)
    try:
        serving.run(app, host=args.host, port=args.port, log_level=args.log_level)
    finally:
        hub.close()
    return 0


def _err(message: str) -> None:
    """An error line on stderr; a quoted workspace value cannot drive the terminal."""
    from core.noma.visible import visible

    print(visible(message), file=sys.stderr)


def visible_line(text: str) -> str:
    """A stored (workspace-side) name, shown on one line with controls as markers."""
    from core.noma.visible import visible_line as line

    return line(text)
