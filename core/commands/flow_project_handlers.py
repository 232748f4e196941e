"""Handlers behind ``noma flow project``: project, write through the boundary, check.

The record is `core.flow.projection.project_flow`'s (what MCP ``flow_project`` and the
REST route return); writing adds the stamp and refuses to replace a hand edit.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..flow import FlowContext, FlowRefusal, FlowResult, to_json
from ..flow.errors import Refused
from ..flow.projection import (
    project_agents_md,
    project_flow,
    projection_status,
    stamped_bytes,
)
from ..flow.projection.files import write_projection
from ..noma.visible import visible_line as _v
from .flow_handlers import _call, _finish
from .output import error, write, write_data, write_json


def cmd_project(args: argparse.Namespace) -> int:
    if args.check:
        if args.flow_id or args.harness or args.version or args.write or args.force:
            error("usage: noma flow project --check [--out PATH]")
            return 2
        return _check(args)
    if args.agents_md:
        if args.flow_id or args.harness or args.version:
            error("usage: noma flow project --agents-md [--out PATH | --write] [--force]")
            return 2
        return _project(args, project_agents_md)
    if not args.flow_id:
        error("usage: noma flow project FLOW_ID --harness H [--out PATH | --write] [--force]")
        return 2
    request: dict[str, Any] = {"flow_id": args.flow_id, "harness": args.harness}
    if args.version is not None:
        request["version"] = args.version
    return _project(args, lambda ctx: project_flow(ctx, request))


def _project(args: argparse.Namespace, make: Callable[[FlowContext], FlowResult]) -> int:
    if not (args.out or args.write):
        result = _call(args, make, "read")
        if result is None:
            return 2
        if isinstance(result, FlowRefusal) or args.json:
            return _finish(args, result, None)
        write_data(result["rendered"].encode("utf-8"))  # exact into a pipe, marked on a tty
        return 0
    root = Path(args.root)

    def written(ctx: FlowContext) -> FlowResult:
        record = make(ctx)
        if isinstance(record, FlowRefusal):
            return record
        # --out is a path the user typed (from the current folder, as for export);
        # --write is the harness's own path below the workspace root.
        target = Path(args.out).absolute() if args.out else record["path"]
        try:
            done = write_projection(
                ctx_root(ctx, root), target, stamped_bytes(record), force=args.force
            )
        except Refused as exc:
            if exc.refusal.code == "FLOW_PROJECTION_DRIFT":
                error(f"{_v(str(target))}: edited by hand or not a projection; --force replaces it")
            return exc.refusal
        projection = {k: v for k, v in record.items() if k != "rendered"}
        return {
            "schema": "noma.flow_projection_write/v0",
            "path": str(done.path),
            "action": done.action,
            "projection": projection,
        }

    result = _call(args, written, "read")
    return 2 if result is None else _finish(args, result, _human_written)


def ctx_root(ctx: FlowContext, fallback: Path) -> Path:
    """The workspace root the context was opened on (the folder ``--root`` named)."""
    return ctx.root if ctx.root is not None else fallback


def _human_written(result: dict[str, Any]) -> str:
    p = result["projection"]
    what = (
        f"{_v(p['flow_id'])}@{_v(p['flow_version'])} {p['harness']}"
        if "flow_id" in p
        else f"AGENTS.md from {len(p['flows'])} flows"
    )
    stale = f" (stale: the newest is {p['latest_version']})" if p.get("stale") else ""
    return f"{result['action']} {_v(result['path'])}  {what}{stale}\n"


def _check(args: argparse.Namespace) -> int:
    root = Path(args.root)
    paths = [str(Path(args.out).absolute())] if args.out else None
    result = _call(args, lambda ctx: projection_status(ctx, ctx_root(ctx, root), paths), "read")
    if result is None:
        return 2
    assert not isinstance(result, FlowRefusal)
    if args.json:
        write_json(to_json(result))
    else:
        lines = []
        for f in result["files"]:
            lines.append(f"{f['status']:<8} {_v(f['path'])}")
            for flow in f.get("flows", ()):
                if flow["stale"]:
                    newest = flow["latest_version"] or "gone"
                    lines.append(
                        f"         {_v(flow['flow_id'])}@{_v(flow['flow_version'])} (newest: "
                        f"{_v(newest)})"
                    )
        if not result["files"]:
            lines.append("no projection files found")
        write("\n".join(lines) + "\n")
    return 0 if result["ok"] else 1
