"""``noma flow project``: argparse wiring only (the handlers are imported when it runs).

Kept out of `core.commands.flow` so the projection surface is one registration line there.
"""

from __future__ import annotations

import argparse


def register(fsub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = fsub.add_parser(
        "project",
        parents=[common],
        help="render a flow for a harness (derived, read-only), AGENTS.md, or check files",
        usage="noma flow project FLOW_ID --harness H [--version V] [--out PATH | --write] "
        "[--force] | --agents-md [--out PATH | --write] [--force] | --check [--out PATH]",
    )
    p.add_argument("flow_id", nargs="?")
    # Not `choices=`: an unknown harness is the handler's BAD_REQUEST, as on MCP and REST.
    p.add_argument(
        "--harness",
        help="cursor_rule | cursor_skill | mcp_prompt | cli_runbook | agent_bundle",
    )
    p.add_argument("--version", help="a version (default: the newest)")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--out", metavar="PATH", help="write (or with --check, check) this file")
    target.add_argument(
        "--write", action="store_true", help="write to the harness's own path in the workspace"
    )
    p.add_argument(
        "--force", action="store_true", help="replace a hand-edited or foreign file (drift)"
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--agents-md", action="store_true", help="AGENTS.md from every visible flow")
    mode.add_argument(
        "--check",
        action="store_true",
        help="report written projections as current, stale, drift or foreign (exit 1 unless "
        "all are current)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import sqlite3

    from ..noma.boundary import BoundaryError
    from . import flow_project_handlers
    from .output import error

    try:
        return flow_project_handlers.cmd_project(args)
    except BoundaryError as exc:
        error(str(exc))
        return 2
    except (sqlite3.Error, OSError) as exc:
        error(f"flow project: {type(exc).__name__}: {exc}")
        return 2
