"""``noma mcp``: serve the Annex B MCP tools over stdio.

Every ``noma`` call imports this module to build its parser, so the MCP server (and the
patch engine behind it) loads inside the handler.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", help="serve the Annex B MCP tools over stdio")
    p.add_argument(
        "--root",
        default=".",
        help="files must lie under this directory (default: the current one; '/' for any)",
    )
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..mcp.server import serve

    return serve(Path(args.root))
