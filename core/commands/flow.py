"""``noma flow ...``: flow definitions and runs from the shell, over the one handler family.

Every command opens the workspace (``--root``, default the current folder), calls the same
handler the MCP tool and the pane call, and prints its result: the record as JSON with
``--json`` (byte-for-byte what the other surfaces return), else a short summary. A refusal
exits 1 with its §8 code; a workspace that cannot be opened exits 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

# Only argparse wiring lives here: every ``noma`` call imports this module to build its
# parser, so the flow engine (pydantic models, SQLite store) is imported by the handlers in
# `flow_handlers` only when a flow command actually runs.


def _guarded(name: str) -> Callable[[argparse.Namespace], int]:
    """Resolve ``flow_handlers.<name>`` at call time; store and file faults exit 2."""

    def run(args: argparse.Namespace) -> int:
        import sqlite3

        from . import flow_handlers
        from .output import error

        try:
            return int(getattr(flow_handlers, name)(args))
        except (sqlite3.Error, OSError) as exc:
            error(f"flow store: {type(exc).__name__}: {exc}")
            return 2

    return run


def _input_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("expected NAME=VALUE")
    return name, value


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``flow`` command group."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=".", help="workspace folder (default: current)")
    common.add_argument("--json", action="store_true", help="print the record as JSON")

    flow = subparsers.add_parser("flow", help="flow definitions and runs")
    fsub = flow.add_subparsers(dest="flow_command", metavar="ACTION", required=True)

    p = fsub.add_parser(
        "list", parents=[common], help="canonical flows, pending imports and proposed changes"
    )
    p.add_argument("--scope", choices=("personal", "project", "org"))
    p.add_argument("--tag")
    p.set_defaults(func=_guarded("cmd_list"))

    p = fsub.add_parser("get", parents=[common], help="one flow bundle")
    p.add_argument("flow_id")
    p.add_argument("--version", help="a version (default: the newest)")
    p.set_defaults(func=_guarded("cmd_get"))

    p = fsub.add_parser("import", parents=[common], help="import a bundle for review (inert)")
    p.add_argument("file")
    p.set_defaults(func=_guarded("cmd_import"))

    p = fsub.add_parser(
        "propose", parents=[common], help="propose a new flow or a new version for review"
    )
    p.add_argument("file", help="a bundle (.json, else YAML); an edit bumps flow.version")
    p.add_argument("--intent", help="why (shown to the reviewer)")
    p.add_argument("--format", choices=("yaml", "json"), help="how approval writes it")
    p.set_defaults(func=_guarded("cmd_propose"))

    p = fsub.add_parser(
        "review",
        parents=[common],
        help="show a proposal (what it changes), or approve or reject it",
    )
    p.add_argument("proposal_id")
    decision = p.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true")
    decision.add_argument("--reject", action="store_true")
    p.set_defaults(func=_guarded("cmd_review"))

    p = fsub.add_parser("proposals", parents=[common], help="imports and run outcomes to review")
    p.add_argument("--status", choices=("pending", "approved", "rejected"))
    p.add_argument("--kind", choices=("flow_import", "flow_change", "flow_run_outcome"))
    p.set_defaults(func=_guarded("cmd_proposals"))

    p = fsub.add_parser("export", parents=[common], help="write a bundle (lossless)")
    p.add_argument("flow_id")
    p.add_argument("--version")
    p.add_argument("--format", choices=("yaml", "json"), help="default: the bundle's own format")
    p.add_argument("--out", metavar="PATH", help="write here instead of stdout")
    p.set_defaults(func=_guarded("cmd_export"))

    from .flow_project import register as register_project

    register_project(fsub, common)

    from .flow_candidates import register as register_candidates

    register_candidates(fsub, common)

    run = fsub.add_parser("run", help="start, advance and execute flow runs")
    rsub = run.add_subparsers(dest="run_command", metavar="ACTION", required=True)

    p = rsub.add_parser("start", parents=[common], help="start a run pinned to a version")
    p.add_argument("flow_id")
    pin = p.add_mutually_exclusive_group(required=True)
    pin.add_argument("--version", help="the flow version to pin (flow_version is required)")
    pin.add_argument(
        "--latest", action="store_true", help="pin the newest visible version (an explicit choice)"
    )
    p.add_argument("--task-ref")
    p.add_argument("--external-ref")
    p.add_argument(
        "--input",
        dest="inputs",
        action="append",
        type=_input_pair,
        metavar="NAME=VALUE",
        help="a value for a declared flow input (repeatable)",
    )
    p.set_defaults(func=_guarded("cmd_run_start"))

    p = rsub.add_parser("get", parents=[common], help="one run")
    p.add_argument("run_id")
    p.set_defaults(func=_guarded("cmd_run"), action="get")

    p = rsub.add_parser("list", parents=[common], help="visible runs, newest first")
    p.add_argument("--flow", dest="flow_id")
    p.add_argument("--status", choices=("pending", "in_progress", "blocked", "done", "abandoned"))
    p.add_argument("--task-ref")
    p.add_argument("--limit", type=int)
    p.add_argument("--cursor")
    p.set_defaults(func=_guarded("cmd_run"), action="list")

    p = rsub.add_parser("advance", parents=[common], help="move the frontier step")
    p.add_argument("run_id")
    p.add_argument("step_id")
    p.add_argument("to_status", choices=("in_progress", "blocked", "done", "skipped"))
    p.add_argument("--skip-reason")
    p.add_argument("--approve", action="store_true", help="human review: approve the evidence")
    p.add_argument("--etag", dest="expected_etag")
    p.set_defaults(func=_guarded("cmd_run"), action="advance")

    p = rsub.add_parser("evidence", parents=[common], help="attach an evidence pointer")
    p.add_argument("run_id")
    p.add_argument("step_id")
    p.add_argument("evidence_ref")
    p.add_argument(
        "--kind",
        dest="pointer_kind",
        required=True,
        choices=("proposal", "artifact", "hash", "test_result"),
    )
    p.add_argument("--etag", dest="expected_etag")
    p.set_defaults(func=_guarded("cmd_run"), action="evidence")

    p = rsub.add_parser(
        "consent",
        parents=[common],
        help="mint an execution consent (RUN --lane L --cost-cap N), or `consent revoke ID`",
        usage="noma flow run consent RUN --lane L --cost-cap N [--ttl S] | consent revoke ID",
    )
    p.add_argument("run_id", metavar="RUN|revoke")
    p.add_argument("consent", nargs="?", metavar="ID", help="with `revoke`: id or consent_ref")
    p.add_argument(
        "--lane",
        dest="allowed_lanes",
        action="append",
        choices=("local_default", "cloud_premium"),
    )
    p.add_argument("--cost-cap", dest="cost_cap_units", type=int)
    p.add_argument("--ttl", dest="ttl_seconds", type=int)
    p.set_defaults(func=_guarded("cmd_consent"), action="consent")

    p = rsub.add_parser("consents", parents=[common], help="your consents for a run")
    p.add_argument("run_id")
    p.set_defaults(func=_guarded("cmd_run"), action="consents")

    p = rsub.add_parser("execute", parents=[common], help="execute an automatable step")
    p.add_argument("run_id")
    p.add_argument("step_id")
    p.add_argument("--consent", dest="consent_id", required=True)
    p.add_argument("--lane", dest="model_lane", choices=("local_default", "cloud_premium"))
    p.add_argument("--dry-run", action="store_true", help="check the gates only; run nothing")
    p.add_argument("--etag", dest="expected_etag")
    p.set_defaults(func=_guarded("cmd_run"), action="execute_automatable")

    p = rsub.add_parser("submit-review", parents=[common], help="send the outcome to review")
    p.add_argument("run_id")
    p.add_argument("--intent", required=True)
    p.set_defaults(func=_guarded("cmd_run"), action="submit_review")


# --------------------------------------------------------------------------- plumbing
