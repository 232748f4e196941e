"""``noma skills serve|tools``: argparse wiring for the skills runtime.

Every ``noma`` invocation imports this module to register the subcommand, so it imports
nothing but argparse at module level; the server stack loads inside the handlers.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    skills = subparsers.add_parser(
        "skills", help="Skills runtime: serve the JSON-RPC API, export the LLM tools"
    )
    sub = skills.add_subparsers(dest="skills_command", required=True)

    serve = sub.add_parser("serve", help="serve the Skills Protocol (JSON-RPC 2.0 at /rpc)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--workspace", default=".", help="workspace folder (default: current)")
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
    serve.set_defaults(func=_serve)

    tools = sub.add_parser("tools", help="print the LLM tool schemas as JSON")
    tools.add_argument("--format", choices=["openai", "anthropic"], default="openai")
    tools.set_defaults(func=_tools)


def _serve(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from core.commands.trust import untrusted_refusal
    from core.netauth import serving
    from core.netauth.gate import BindRefused, protect
    from core.netauth.local_token import token_path
    from core.skills_runtime.app import create_app
    from core.skills_runtime.service import SkillsRuntime
    from core.workspace import Workspace, WorkspaceError

    try:
        workspace = Workspace.open(Path(args.workspace))
    except WorkspaceError as exc:
        print(f"noma skills serve: {exc}", file=sys.stderr)
        return 2
    refusal = untrusted_refusal(workspace)
    if refusal is not None:  # it would serve the folder's skills and hand them secrets
        print(f"noma skills serve: {refusal}", file=sys.stderr)
        return 2
    try:
        runtime = SkillsRuntime(workspace.root)
    except ValueError as exc:  # e.g. a blob quota that is not a number of bytes
        print(f"noma skills serve: {exc}", file=sys.stderr)
        return 2
    try:
        app = protect(create_app(runtime), workspace.root, args.host, args.allow_host)
    except (OSError, BindRefused) as exc:  # no token for a public bind, a foreign token dir
        print(f"noma skills serve: {exc}", file=sys.stderr)
        return 2
    print(
        f"noma skills serve: your token is in {token_path()} (noma hub token local)",
        file=sys.stderr,
    )
    serving.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _tools(args: argparse.Namespace) -> int:
    import json
    import sys

    from core.skills_runtime.tool_schemas import export_tools

    json.dump(export_tools(args.format), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
