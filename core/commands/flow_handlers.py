"""Handlers behind ``noma flow``: open the workspace, call the one handler family, print.

A command opens the workspace as lightly as what it does allows (`Mode`): a read opens it
``lazy``, so listing, getting or exporting a flow in a folder with no run store creates no
``.noma-workbench/`` (no ``actor.key``, no ``runs.sqlite3``); a run write settles the
context only when the gates let the write happen, so a refused start writes nothing
either; proposals (import, propose, review) are store writes that no gate covers, so they
open the store at once.

Imported only when a flow command runs (see `core.commands.flow`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..flow import FlowContext, FlowRefusal, FlowResult, to_json
from ..flow.actions import run_action
from ..flow.context import looks_like_workspace
from ..flow.definitions import export_flow, problem_lines
from ..flow.importing import import_flow
from ..noma.visible import visible_line as _v
from ..workspace import Workspace, WorkspaceError
from .output import error, write, write_json
from .trust import untrusted_notice

RUN_FIELDS = (
    "flow_id",
    "flow_version",
    "task_ref",
    "external_ref",
    "run_id",
    "step_id",
    "to_status",
    "skip_reason",
    "approve",
    "expected_etag",
    "evidence_ref",
    "pointer_kind",
    "allowed_lanes",
    "cost_cap_units",
    "ttl_seconds",
    "consent_id",
    "model_lane",
    "dry_run",
    "intent",
    "status",
    "task_ref",
    "limit",
    "cursor",
)

Mode = Literal["read", "run_write", "proposal"]
READ_RUN_ACTIONS = frozenset({"get", "list", "consents", "proposals"})

MARKS = {"done": "✓", "skipped": "↷", "in_progress": "▶", "blocked": "■", "pending": "·"}


def _open(args: argparse.Namespace, mode: Mode = "proposal") -> FlowContext | None:
    try:
        workspace = Workspace.open(Path(args.root))
    except WorkspaceError as exc:
        error(str(exc))
        return None
    if not looks_like_workspace(workspace):
        error(f"{workspace.root}: not a workspace (no noma-workbench.toml and no flows/)")
        return None
    notice = untrusted_notice(workspace)
    if notice is not None:  # go on with those settings off, and say how to turn them on
        error(notice)
    try:
        ctx = FlowContext.open(workspace, lazy=mode != "proposal")
        return ctx.settled(write=True) if mode == "run_write" else ctx
    except WorkspaceError as exc:  # a refused state folder (StateDirError) says why
        error(str(exc))
        return None


def _finish(args: argparse.Namespace, result: FlowResult, human: Any) -> int:
    if args.json:
        write_json(to_json(result))
        return 1 if isinstance(result, FlowRefusal) else 0
    if isinstance(result, FlowRefusal):
        error(f"{result.code} ({result.status}): {_v(result.message)}")
        for problem in result.problems:
            error(f"  {_v(problem.path or '(request)')}: {_v(problem.message)}")
        return 1
    write(human(result))
    return 0


def payload(args: argparse.Namespace) -> dict[str, Any]:
    """The §2 request the arguments describe (false flags left out, as a direct caller would)."""
    out = {}
    for name in RUN_FIELDS:
        value = getattr(args, name, None)
        if value is not None and value is not False:
            out[name] = value
    return out


def _call(
    args: argparse.Namespace, action: Callable[[FlowContext], FlowResult], mode: Mode
) -> FlowResult | None:
    """Open the workspace, run one handler, close it; None when it cannot be opened."""
    ctx = _open(args, mode)
    if ctx is None:
        return None
    try:
        return action(ctx)
    finally:
        ctx.close()


def _respond(
    args: argparse.Namespace,
    action: Callable[[FlowContext], FlowResult],
    human: Any,
    mode: Mode = "read",
) -> int:
    result = _call(args, action, mode)
    return 2 if result is None else _finish(args, result, human)


def cmd_run(args: argparse.Namespace) -> int:
    mode: Mode = "read" if args.action in READ_RUN_ACTIONS else "run_write"
    return _respond(
        args, lambda ctx: run_action(ctx, args.action, payload(args)), _human_run_result, mode
    )


def cmd_run_start(args: argparse.Namespace) -> int:
    def start(ctx: FlowContext) -> FlowResult:
        request = payload(args)
        if args.latest:  # the explicit choice; without it flow_version is required (§2.1)
            entry = ctx.catalog.find(args.flow_id)
            request["flow_version"] = entry.bundle.version if entry is not None else "0.0.0"
        else:
            request["flow_version"] = args.version
        if args.inputs:
            request["inputs"] = dict(args.inputs)
        return run_action(ctx, "start", request)

    return _respond(args, start, _human_run_result, "run_write")


def cmd_list(args: argparse.Namespace) -> int:
    request = {"scope": args.scope, "tag": args.tag}
    return _respond(args, lambda ctx: run_action(ctx, "flows", request), _human_flow_list)


def cmd_get(args: argparse.Namespace) -> int:
    request = {"flow_id": args.flow_id, "version": args.version}
    return _respond(args, lambda ctx: run_action(ctx, "flow", request), _human_flow)


def _bundle_file(path: str) -> tuple[str, str] | None:
    """The file's text and format (``json`` for ``.json``, else ``yaml``), or None (after
    saying why) when it is missing, too large, not UTF-8 or (``.json``) not JSON text."""
    from ..flow.bundle import MAX_BUNDLE_BYTES
    from .inputs import InputError, read_json, read_text

    try:
        if Path(path).stat().st_size > MAX_BUNDLE_BYTES:
            error(f"{path}: larger than {MAX_BUNDLE_BYTES} bytes; not a flow bundle")
            return None
        text = read_text(path)
        fmt = "json" if path.endswith(".json") else "yaml"
        if fmt == "json":
            read_json(text, path)
    except OSError as exc:
        error(f"{path}: {exc.strerror or exc}")
        return None
    except InputError as exc:
        error(str(exc))
        return None
    return text, fmt


def cmd_import(args: argparse.Namespace) -> int:
    """The file must be UTF-8 (and, for ``.json``, strict JSON text) or the command exits 2
    naming it; what it holds is then the import handler's to accept or refuse (exit 1)."""
    read = _bundle_file(args.file)
    if read is None:
        return 2
    text, fmt = read
    return _respond(args, lambda ctx: import_flow(ctx, text, fmt), _human_proposal, "proposal")


def cmd_propose(args: argparse.Namespace) -> int:
    """The file is read as for import; its bundle goes to the same ``propose`` handler the
    MCP ``flow_propose`` tool and ``POST /api/v1/flows`` call, as a ``bundle`` object."""
    from ..flow.bundle import BundleError, parse_bundle_text
    from ..flow.errors import Problem

    read = _bundle_file(args.file)
    if read is None:
        return 2
    text, fmt = read
    try:
        data: Any = parse_bundle_text(text, json_form=fmt == "json").to_json()
    except BundleError as exc:
        problems = tuple(
            Problem(f"bundle.{p.path}" if p.path else "bundle", p.message) for p in exc.problems
        )
        return _finish(args, FlowRefusal("BAD_REQUEST", problems), _human_proposal)
    request = {"bundle": data, "intent": args.intent, "format": args.format}
    return _respond(
        args, lambda ctx: run_action(ctx, "propose", request), _human_proposal, "proposal"
    )


def cmd_review(args: argparse.Namespace) -> int:
    """Without ``--approve``/``--reject``: show the proposal and what it would change."""
    if not args.approve and not args.reject:
        shown = {"proposal_id": args.proposal_id}
        return _respond(args, lambda ctx: run_action(ctx, "proposal", shown), _human_shown)
    request = {"proposal_id": args.proposal_id, "approve": bool(args.approve)}
    return _respond(
        args, lambda ctx: run_action(ctx, "review", request), _human_proposal, "proposal"
    )


def cmd_proposals(args: argparse.Namespace) -> int:
    request = {"status": args.status, "kind": args.kind}
    return _respond(args, lambda ctx: run_action(ctx, "proposals", request), _human_proposals)


def cmd_consent(args: argparse.Namespace) -> int:
    """``consent RUN --lane L --cost-cap N`` mints; ``consent revoke ID`` revokes."""
    if args.run_id == "revoke":
        if not args.consent:
            error("usage: noma flow run consent revoke ID (a consent id or consent_ref)")
            return 2
        request = {"consent": args.consent}
        return _respond(
            args,
            lambda ctx: run_action(ctx, "revoke_consent", request),
            _human_run_result,
            "run_write",
        )
    if args.consent is not None or not args.allowed_lanes or args.cost_cap_units is None:
        error("usage: noma flow run consent RUN --lane L --cost-cap N [--ttl S]")
        return 2
    return cmd_run(args)


def cmd_export(args: argparse.Namespace) -> int:
    result = _call(
        args, lambda ctx: export_flow(ctx, args.flow_id, args.version, args.format), "read"
    )
    if result is None:
        return 2
    if isinstance(result, FlowRefusal) or args.json or not args.out:
        return _finish(args, result, lambda r: r["text"])
    from ..flow.importing import write_atomic

    write_atomic(Path(args.out), result["text"])
    return 0


# ------------------------------------------------------------------------ summaries


def _human_run(run: dict[str, Any]) -> list[str]:
    lines = [
        f"{_v(run['run_id'])}  {_v(run['flow_id'])}@{_v(run['flow_version'])}  "
        f"{run['status']}  etag {run['etag']}"
    ]
    frontier = next(
        (s["step_id"] for s in run["step_states"] if s["status"] not in ("done", "skipped")),
        None,
    )
    for state in run["step_states"]:
        mark = "▶" if state["step_id"] == frontier else MARKS.get(state["status"], "?")
        verified = "verified" if state["verified"] else ""
        evidence = f"  evidence {_v(state['evidence_ref'])}" if state.get("evidence_ref") else ""
        if state.get("skip_reason"):
            evidence += f"  reason {_v(state['skip_reason'])}"
        step = _v(state["step_id"])
        lines.append(f"  {mark} {step:<32} {state['status']:<11} {verified}{evidence}")
    return lines


def _human_run_result(result: dict[str, Any]) -> str:
    lines: list[str] = []
    if "runs" in result:
        for run in result["runs"]:
            lines.append(
                f"{_v(run['run_id'])}  {_v(run['flow_id'])}@{_v(run['flow_version'])}  "
                f"{run['status']}"
            )
        if result.get("next_cursor"):
            lines.append(f"more: --cursor {result['next_cursor']}")
        return "\n".join(lines) + ("\n" if lines else "")
    if "consents" in result:
        for c in result["consents"]:
            lines.append(_human_consent(c))
        return "\n".join(lines) + ("\n" if lines else "")
    if "consent" in result and "consent_ref" in result["consent"]:
        return _human_consent(result["consent"]) + "\n"
    if "consent" in result:
        c = result["consent"]
        return (
            f"consent {c['consent_id']}  lanes {','.join(c['allowed_lanes'])}  cap "
            f"{c['cost_cap_units']} units  expires {c['expires_at']}\n"
        )
    if "proposal" in result:
        return _human_proposal(result)
    if result.get("dry_run"):
        lines.append(
            f"dry run: every gate passes; lane {result['model_lane']}, "
            f"{result['reservable_units']} units reservable"
        )
    execution = result.get("execution")
    if execution:
        lines.append(
            f"execution {execution['execution_id']}  {execution['status']}  "
            f"{execution['cost_units']} units  lane {execution['model_lane']}"
        )
    if "run" in result:
        lines.extend(_human_run(result["run"]))
    return "\n".join(lines) + "\n"


def _human_consent(c: dict[str, Any]) -> str:
    return (
        f"{c['consent_ref']}  {c['state']}  lanes {','.join(c['allowed_lanes'])}  "
        f"{c['cost_consumed_units']}/{c['cost_cap_units']} units  expires {c['expires_at']}"
    )


def _human_proposals(result: dict[str, Any]) -> str:
    lines = [
        f"{p['proposal_id']}  {p['kind']}  {p['status']}  {_v(p['flow_id'])}@"
        f"{_v(p['flow_version'])}"
        + (f"  run {_v(p['run_id'])}" if p.get("run_id") else "")
        + (f"  {_printable(p['intent'])}" if p.get("intent") else "")
        for p in result["proposals"]
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def _printable(text: str, limit: int = 80) -> str:
    """Untrusted text for a terminal, shortened: control characters shown as markers."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return _v(text)


def _human_proposal(result: dict[str, Any]) -> str:
    p = result["proposal"]
    flow = f"{_v(p['flow_id'])}@{_v(p['flow_version'])}"
    return f"{p['proposal_id']}  {p['kind']}  {p['status']}  {flow}\n"


def _human_shown(result: dict[str, Any]) -> str:
    """A proposal for a reviewer: who/what, then the change summary and the diff, every
    line of bundle text made visible (control characters shown, never interpreted)."""
    lines = [_human_proposal(result).rstrip("\n")]
    p = result["proposal"]
    if p.get("intent"):
        lines.append(f"intent: {_printable(p['intent'], 400)}")
    changes = result.get("changes")
    if changes is not None:
        lines.extend(change_lines(result))
        lines.append("")
        lines.extend(_v(line) for line in result["diff"].splitlines())
    return "\n".join(lines) + "\n"


def change_lines(result: dict[str, Any]) -> list[str]:
    """The change summary of a shown proposal, one line per kind of change."""
    c = result["changes"]
    base = result.get("base_version")
    out = ["new flow" if c["new_flow"] else f"changes against {_v(str(base))}:"]
    if c["flow_fields"]:
        out.append("  flow fields: " + ", ".join(c["flow_fields"]))
    for key, label in (("steps_added", "added"), ("steps_removed", "removed")):
        if c[key]:
            out.append(f"  steps {label}: " + ", ".join(_v(s) for s in c[key]))
    for step in c["steps_changed"]:
        out.append(f"  step {_v(step['step_id'])} changed: " + ", ".join(step["fields"]))
    return out


def _human_flow_list(result: dict[str, Any]) -> str:
    posture = result["posture"]
    on = {True: "ON", False: "off"}
    lines = [
        f"gates: run writes {on[posture['run_writes_enabled']]} · automatable execution "
        f"{on[posture['automatable_execution_enabled']]}"
    ]
    labels = {"run_writes_enabled": "run writes", "automatable_execution_enabled": "automatable"}
    lines += [
        f"  {labels.get(name, _v(name))} is on: {_v(text)}"
        for name, text in posture.get("why", {}).items()
    ]
    lines += [f"config problem: {_v(p['path'])}: {_v(p['message'])}" for p in posture["problems"]]
    lines += [
        f"{_v(f['flow_id'])}@{_v(f['version'])}  {_v(f['title'])}  ({f['steps']} steps, "
        f"{f['automatable_steps']} automatable)  {_v(f['file'])}"
        for f in result["flows"]
    ]
    lines += [
        f"{p['proposal_id']}  pending import of {_v(p['flow_id'])}@{_v(p['version'])}"
        for p in result["pending_imports"]
    ]
    lines += [
        f"{p['proposal_id']}  proposed {_v(p['flow_id'])}@{_v(p['version'])}"
        + (f" (after {_v(p['base_version'])})" if p.get("base_version") else " (new flow)")
        for p in result.get("pending_changes", [])
    ]
    lines += [f"problem: {_v(line)}" for line in problem_lines(result)]
    return "\n".join(lines) + ("\n" if lines else "")


def _human_flow(result: dict[str, Any]) -> str:
    flow = result["bundle"]["flow"]
    lines = [
        f"{_v(flow['flow_id'])}@{_v(flow['version'])}  {_v(flow['title'])}  [{_v(flow['scope'])}]"
    ]
    for step in result["bundle"]["steps"]:
        lines.append(
            f"  {step['ordinal']:>3}. {_v(step['owned_job'])}  ({step['automatable']}, "
            f"{_v(step['verification']['kind'])})"
        )
    return "\n".join(lines) + "\n"
