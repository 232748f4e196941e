"""Handlers behind ``noma flow candidates``: one candidate handler each, then print.

Candidate text is untrusted: every title and outline line is shown through
`visible_line`, so control characters appear as markers, never as terminal commands."""

from __future__ import annotations

import argparse
from typing import Any

from ..flow.candidates import candidate_action
from ..noma.visible import visible_line as _v
from .flow_handlers import _respond


def cmd_list(args: argparse.Namespace) -> int:
    request = {"status": args.status, "include_low": args.include_low or None, "limit": args.limit}
    return _respond(args, lambda ctx: candidate_action(ctx, "candidate_list", request), _human_list)


def cmd_get(args: argparse.Namespace) -> int:
    request = {"candidate_id": args.candidate_id}
    return _respond(args, lambda ctx: candidate_action(ctx, "candidate_get", request), _human_get)


def cmd_review(args: argparse.Namespace) -> int:
    if args.approve:
        request = {"decision": "approve", "flow_id": args.flow_id, "scope": args.scope}
    elif args.reject:
        request = {"decision": "reject", "flow_id": args.flow_id, "scope": args.scope}
    else:
        request = {"decision": "merge", "flow_id": args.merge_into, "scope": args.scope}
    request["candidate_id"] = args.candidate_id
    return _respond(
        args,
        lambda ctx: candidate_action(ctx, "candidate_review", request),
        _human_review,
        "proposal",  # files a flow proposal on approval: the real store
    )


def _line(c: dict[str, Any]) -> str:
    return (
        f"{c['candidate_id']}  {_v(c['status'])}  {c['confidence']}  {c['trigger_signal']}  "
        f"[{c['scope_hint']}]  seen {c['observed_count']}x  {_v(c['suggested_title'])}"
    )


def _human_list(result: dict[str, Any]) -> str:
    lines = [_line(c) for c in result["candidates"]]
    return "\n".join(lines) + ("\n" if lines else "")


def _human_get(result: dict[str, Any]) -> str:
    c = result["candidate"]
    lines = [_line(c)]
    lines += [f"  {n:>3}. {_v(text)}" for n, text in enumerate(c.get("draft_steps", []), 1)]
    lines += [f"  evidence {_v(ref)}" for ref in c["evidence_refs"]]
    lines += [
        f"  could merge into {_v(o['flow_id'])}@{_v(o['version'])} (overlap {o['overlap']})"
        for o in result["merge_offers"]
    ]
    return "\n".join(lines) + "\n"


def _human_review(result: dict[str, Any]) -> str:
    lines = [_line(result["candidate"])]
    proposal = result.get("proposal")
    if proposal is not None:
        lines.append(
            f"  filed {proposal['proposal_id']} for import review: noma flow review "
            f"{proposal['proposal_id']} --approve"
        )
    return "\n".join(lines) + "\n"
