"""Handlers behind ``noma flow``: open the workspace, call the one handler family, print.

Imported only when a flow command runs (see `core.commands.flow`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..flow import FlowContext, FlowRefusal, FlowResult, to_json
from ..flow.actions import run_action
from ..flow.context import looks_like_workspace
from ..flow.definitions import export_flow, get_flow, list_flows, problem_lines
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

MARKS = {"done": "✓", "skipped": "↷", "in_progress": "▶", "blocked": "■", "pending": "·"}


def _open(args: argparse.Namespace) -> FlowContext | None:
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
        return FlowContext.open(workspace)
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
    args: argparse.Namespace, action: Callable[[FlowContext], FlowResult]
) -> FlowResult | None:
    """Open the workspace, run one handler, close it; None when it cannot be opened."""
    ctx = _open(args)
    if ctx is None:
        return None
    try:
        return action(ctx)
    finally:
        ctx.close()


def _respond(
    args: argparse.Namespace, action: Callable[[FlowContext], FlowResult], human: Any
) -> int:
    result = _call(args, action)
    return 2 if result is None else _finish(args, result, human)


def cmd_run(args: argparse.Namespace) -> int:
    return _respond(
        args, lambda ctx: run_action(ctx, args.action, payload(args)), _human_run_result
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

    return _respond(args, start, _human_run_result)


def cmd_list(args: argparse.Namespace) -> int:
    return _respond(args, list_flows, _human_flow_list)


def cmd_get(args: argparse.Namespace) -> int:
    return _respond(args, lambda ctx: get_flow(ctx, args.flow_id, args.version), _human_flow)


def cmd_import(args: argparse.Namespace) -> int:
    """The file must be UTF-8 (and, for ``.json``, strict JSON text) or the command exits 2
    naming it; what it holds is then the import handler's to accept or refuse (exit 1)."""
    from ..flow.bundle import MAX_BUNDLE_BYTES
    from .inputs import InputError, read_json, read_text

    try:
        if Path(args.file).stat().st_size > MAX_BUNDLE_BYTES:
            error(f"{args.file}: larger than {MAX_BUNDLE_BYTES} bytes; not a flow bundle")
            return 2
        text = read_text(args.file)
        fmt = "json" if args.file.endswith(".json") else "yaml"
        if fmt == "json":
            read_json(text, args.file)
    except OSError as exc:
        error(f"{args.file}: {exc.strerror or exc}")
        return 2
    except InputError as exc:
        error(str(exc))
        return 2
    return _respond(args, lambda ctx: import_flow(ctx, text, fmt), _human_proposal)


def cmd_review(args: argparse.Namespace) -> int:
    request = {"proposal_id": args.proposal_id, "approve": bool(args.approve)}
    return _respond(args, lambda ctx: run_action(ctx, "review", request), _human_proposal)


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
            args, lambda ctx: run_action(ctx, "revoke_consent", request), _human_run_result
        )
    if args.consent is not None or not args.allowed_lanes or args.cost_cap_units is None:
        error("usage: noma flow run consent RUN --lane L --cost-cap N [--ttl S]")
        return 2
    return cmd_run(args)


def cmd_export(args: argparse.Namespace) -> int:
    result = _call(args, lambda ctx: export_flow(ctx, args.flow_id, args.version, args.format))
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


def _human_flow_list(result: dict[str, Any]) -> str:
    posture = result["posture"]
    on = {True: "ON", False: "off"}
    lines = [
        f"gates: run writes {on[posture['run_writes_enabled']]} · automatable execution "
        f"{on[posture['automatable_execution_enabled']]}"
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
