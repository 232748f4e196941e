"""``noma skills serve|tools|blobs``: the skills runtime's commands.

Every ``noma`` invocation imports this module to register the subcommand, so it imports
nothing but argparse at module level; the server stack loads inside the handlers.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..netauth.bind import add_serving_arguments

if TYPE_CHECKING:
    from core.skills_runtime.blob_store import BlobStore


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    skills = subparsers.add_parser(
        "skills", help="Skills runtime: serve the JSON-RPC API, export the LLM tools"
    )
    sub = skills.add_subparsers(dest="skills_command", required=True)

    serve = sub.add_parser("serve", help="serve the Skills Protocol (JSON-RPC 2.0 at /rpc)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument(
        "--port",
        type=int,
        default=8080,
        help="TCP port (default 8080; 0: a free one, named on stderr as 'listening on URL')",
    )
    serve.add_argument("--workspace", default=".", help="workspace folder (default: current)")
    add_serving_arguments(serve)
    serve.set_defaults(func=_serve)

    tools = sub.add_parser("tools", help="print the LLM tool schemas as JSON")
    tools.add_argument("--format", choices=["openai", "anthropic"], default="openai")
    tools.add_argument(
        "--system-prompt",
        action="store_true",
        help="print the system-prompt snippet (Skills Protocol Appendix A) instead",
    )
    tools.set_defaults(func=_tools)

    blobs = sub.add_parser("blobs", help="the workspace's blob store: list, sweep, delete")
    bsub = blobs.add_subparsers(dest="blobs_command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", default=".", help="workspace folder (default: current)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    p = bsub.add_parser("list", parents=[common], help="every blob with its owner and size")
    p.add_argument(
        "--unowned", action="store_true", help="only what a sweep would reclaim (nothing removed)"
    )
    p.set_defaults(func=_blobs_list)
    p = bsub.add_parser(
        "gc",
        parents=[common],
        help="remove what crashed processes left (temp files, blobs of runs that never "
        "completed, half-written blobs) and rebuild the quota ledger from the disk",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    p.set_defaults(func=_blobs_gc)
    p = bsub.add_parser("delete", parents=[common], help="delete blobs by id (the operator's call)")
    p.add_argument("blob_ids", nargs="+", metavar="BLOB_ID")
    p.set_defaults(func=_blobs_delete)


def _serve(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from core.netauth import serving
    from core.netauth.gate import BindRefused, protect
    from core.netauth.local_token import token_path
    from core.skills_runtime.app import create_app
    from core.skills_runtime.service import SkillsRuntime
    from core.workspace import Workspace, WorkspaceError, untrusted_refusal

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
    serving.run(
        app, host=args.host, port=args.port, log_level=args.log_level, name="noma skills serve"
    )
    return 0


def _tools(args: argparse.Namespace) -> int:
    import json
    import sys

    from core.skills_runtime.tool_schemas import SYSTEM_PROMPT, export_tools

    if args.system_prompt:
        sys.stdout.write(SYSTEM_PROMPT)
        return 0
    json.dump(export_tools(args.format), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _store(args: argparse.Namespace) -> BlobStore:
    from pathlib import Path

    from core.skills_runtime.blob_store import BlobStore
    from core.skills_runtime.service import STATE_DIR

    return BlobStore(Path(args.workspace) / STATE_DIR / "blobs", sweep=False)


def _emit(args: argparse.Namespace, value: object, lines: list[str]) -> None:
    import json
    import sys

    if args.json:
        json.dump(value, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("".join(f"{line}\n" for line in lines))


def _blobs_list(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        if args.unowned:
            report = store.sweep(dry_run=True)
            _emit(
                args,
                report.to_json(),
                [*report.unowned_blobs, *report.pending_files, *report.orphan_files],
            )
            return 0
        blobs = store.blobs()
        rows = [
            {"blob_id": b.blob_id, "kind": b.kind, "size_bytes": b.size_bytes, "owner": b.owner}
            for b in blobs
        ]
        lines = [
            f"{b.blob_id}  {b.size_bytes:>10}  {b.owner or 'unknown'}  {b.kind}" for b in blobs
        ]
        _emit(args, {"blobs": rows, "ledger_bytes": store.usage()}, lines)
        return 0
    finally:
        store.close()


def _blobs_gc(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        report = store.sweep(dry_run=args.dry_run)
    finally:
        store.close()
    verb = "would free" if args.dry_run else "freed"
    _emit(
        args,
        {"dry_run": bool(args.dry_run), **report.to_json()},
        [
            f"{len(report.pending_files)} temp file(s), {len(report.unowned_blobs)} blob(s) of "
            f"{len(report.dead_runs)} run(s) that never completed, "
            f"{len(report.orphan_files)} half-written file(s): {verb} {report.freed_bytes} "
            f"bytes; ledger {report.ledger_before} -> {report.ledger_after}"
        ],
    )
    return 0


def _blobs_delete(args: argparse.Namespace) -> int:
    import sys

    from core.skills_runtime.blob_store import BlobNotFound

    store = _store(args)
    missing = []
    try:
        for blob_id in args.blob_ids:
            try:
                store.delete(blob_id)
            except BlobNotFound:
                missing.append(blob_id)
    finally:
        store.close()
    for blob_id in missing:
        print(f"noma skills blobs delete: no blob {blob_id!r}", file=sys.stderr)
    return 1 if missing else 0
