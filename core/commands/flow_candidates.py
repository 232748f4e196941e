"""``noma flow candidates list|get|review``: the capture flywheel's review tray (§5).

Argparse wiring only (the engine is imported by `flow_candidate_handlers` when a
candidate command runs). Reviewing is the human's act; the CLI speaks as the workspace's
own actor, a human, so it is where a person approves, rejects or merges a candidate.
"""

from __future__ import annotations

import argparse
from typing import Any


def _run(name: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        import sqlite3

        from . import flow_candidate_handlers
        from .output import error

        try:
            return int(getattr(flow_candidate_handlers, name)(args))
        except (sqlite3.Error, OSError) as exc:
            error(f"flow store: {type(exc).__name__}: {exc}")
            return 2

    return run


def register(fsub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``flow candidates`` under the ``flow`` command group."""
    group = fsub.add_parser("candidates", help="flow candidates: list, get, review (§5)")
    csub = group.add_subparsers(dest="candidates_command", metavar="ACTION", required=True)

    p = csub.add_parser("list", parents=[common], help="visible candidates, oldest first")
    p.add_argument("--status", choices=("pending_review", "promoted", "rejected", "merged_into"))
    p.add_argument("--include-low", action="store_true", help="also low-confidence ones")
    p.add_argument("--limit", type=int)
    p.set_defaults(func=_run("cmd_list"))

    p = csub.add_parser("get", parents=[common], help="one candidate and its merge offers")
    p.add_argument("candidate_id")
    p.set_defaults(func=_run("cmd_get"))

    p = csub.add_parser(
        "review",
        parents=[common],
        help="approve (files a flow proposal), reject, or merge into a flow",
        usage="noma flow candidates review CAND (--approve --flow-id F [--scope S] | --reject "
        "| --merge-into F)",
    )
    p.add_argument("candidate_id")
    decision = p.add_mutually_exclusive_group(required=True)
    decision.add_argument("--approve", action="store_true")
    decision.add_argument("--reject", action="store_true")
    decision.add_argument("--merge-into", metavar="FLOW_ID")
    p.add_argument("--flow-id", help="with --approve: the new flow's id (flow_<slug>)")
    p.add_argument(
        "--scope",
        choices=("personal", "project", "org"),
        help="with --approve: confirm a scope (may narrow the hint, never widen it)",
    )
    p.set_defaults(func=_run("cmd_review"))
