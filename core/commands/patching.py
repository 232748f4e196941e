"""``noma patch | proof | replay | transcript verify | capabilities``.

Every ``noma`` call imports this module to build its parser, so the patch engine (the
typed op models and pydantic with them, every op implementation) is imported inside the
handlers that use it: ``noma check`` never pays for it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .output import error, write, write_data, write_json

if TYPE_CHECKING:
    from ..noma.patch.pipeline import Actor, PatchOutcome, PatchRequest


def add_request_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--op", metavar="JSON", help="one op (or a JSON array of ops)")
    src.add_argument(
        "--ops",
        metavar="FILE",
        help="a patch transaction file: an op, an array, or {ops: [...]} ('-' = stdin)",
    )
    p.add_argument(
        "--strict", action="store_true", help="refuse when the document already has errors"
    )
    p.add_argument("--actor", metavar="KIND:NAME", help="who is patching (default human:<user>)")
    p.add_argument("--model", help="the agent's model, recorded in actor.model")
    p.add_argument("--reason", help="why: stored in the transcript")
    p.add_argument(
        "--expected-sha", metavar="HEX", help="refuse unless the file hash starts with this"
    )
    p.add_argument("--base-sha256", metavar="HEX", help="the hash you read; drift is recorded")
    p.add_argument(
        "--base-hash",
        metavar="HEX",
        help="refuse unless the first op's target block hash starts with this (like baseHash)",
    )
    p.add_argument("--parent-op-id", metavar="UUID", help="a causally prior transcript record")


def _load_ops(args: argparse.Namespace) -> list[Any]:
    from .inputs import read_bytes, read_json

    if args.op is not None:
        payload = read_json(args.op, "--op")
    else:
        payload = read_json(read_bytes(args.ops), "stdin" if args.ops == "-" else args.ops)
    if isinstance(payload, dict) and "ops" in payload and "op" not in payload:
        payload = payload["ops"]
    return payload if isinstance(payload, list) else [payload]


def _actor(args: argparse.Namespace) -> Actor:
    import getpass

    from ..noma.patch.pipeline import Actor

    if args.actor:
        kind, _, name = args.actor.partition(":")
        actor = Actor.from_json({"kind": kind, "name": name})
    else:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "unknown"
        actor = Actor("human", user)
    if args.model:
        actor.model = args.model
    return actor


def _request(args: argparse.Namespace) -> PatchRequest | None:
    from ..noma.patch.errors import PatchError
    from ..noma.patch.pipeline import PatchRequest
    from .inputs import InputError

    try:
        ops = _load_ops(args)
        actor = _actor(args)
    except InputError as exc:
        error(f"cannot read the ops: {exc}")
        return None
    except PatchError as exc:
        error(f"{exc.code}: {exc}")
        return None
    return PatchRequest(
        ops=ops,
        actor=actor,
        reason=args.reason,
        expected_sha=args.expected_sha,
        base_sha256=args.base_sha256,
        parent_op_id=args.parent_op_id,
        strict=args.strict,
        base_hash=args.base_hash,
    )


def outcome_json(outcome: PatchOutcome) -> dict[str, Any]:
    """The patch_block result shape (B.6), plus the records of a multi-op list."""
    if not outcome.ok:
        return {"ok": False, "error": outcome.error, "code": outcome.code}
    out: dict[str, Any] = {
        "ok": True,
        "post_validation": outcome.post_validation,
        "transcript_entry": outcome.records[-1],
        "diagnostics": [d.to_json() for d in outcome.post_diagnostics],
    }
    if len(outcome.records) > 1:
        out["transcript_entries"] = outcome.records
    if outcome.advisories:
        out["advisories"] = outcome.advisories
    return out


def _system_fault(exc: Exception) -> int:
    """A missing file or a book manifest: said in one line, exit 2 (not a rejection)."""
    from ..noma.patch.errors import PatchError

    # A BoundaryError prints as "code: message" by itself.
    error(f"{exc.code}: {exc}" if isinstance(exc, PatchError) else str(exc))
    return 2


def cmd_patch(args: argparse.Namespace) -> int:
    from ..noma.boundary import BoundaryError
    from ..noma.files import DocumentIOError
    from ..noma.patch.errors import PatchError
    from ..noma.patch.pipeline import patch_file
    from ..noma.source import encode

    request = _request(args)
    if request is None:
        return 2
    in_place = args.inplace or args.out is not None
    try:
        outcome = patch_file(args.file, request, out_path=args.out, write=in_place, record=in_place)
    except (DocumentIOError, PatchError, BoundaryError) as exc:
        return _system_fault(exc)
    if outcome.recovery is not None:
        error(f"{args.file}: {outcome.recovery.describe()}")
    if outcome.transcript_error:
        error(f"warning: {outcome.transcript_error}")
    for note in outcome.advisories:
        error(note)
    if args.json:
        write_json(outcome_json(outcome))
        return 0 if outcome.ok else 1
    if not outcome.ok:
        error(f"rejected: {outcome.code}: {outcome.error}")
        return 1
    if not in_place:
        write_data(encode(outcome.new_text or ""))
        return 0
    results = ", ".join(r["patch_result"] for r in outcome.records)
    drift = "  (base_sha_drift: the file changed since you read it)" if outcome.drift else ""
    write(
        f"{args.out or args.file}: {results}; sha256 {outcome.pre_sha256[:8]} -> "
        f"{outcome.post_sha256[:8]}; post-validation {outcome.post_validation}{drift}\n"
    )
    return 0


def cmd_proof(args: argparse.Namespace) -> int:
    from ..noma.boundary import BoundaryError
    from ..noma.files import DocumentIOError
    from ..noma.patch.errors import PatchError
    from ..noma.proof import build_proof

    request = _request(args)
    if request is None:
        return 2
    try:
        proof = build_proof(args.file, request)
    except (DocumentIOError, PatchError, BoundaryError) as exc:
        return _system_fault(exc)
    if args.json:
        write_json(proof.to_json())
    else:
        write(proof.render())
    return 0 if proof.ok else 1


def cmd_replay(args: argparse.Namespace) -> int:
    from ..noma.replay import ReplayError, UnreadableTranscript, replay
    from ..noma.storage import atomic_write

    try:
        base = Path(args.base).read_bytes()
        result = replay(Path(args.transcript), base)
    except OSError as exc:
        error(f"{exc.filename}: {exc.strerror}")
        return 2
    except UnreadableTranscript as exc:  # not a record at all: an unusable input
        error(str(exc))
        return 2
    except ReplayError as exc:
        error(str(exc))
        return 1
    if args.out:
        try:
            atomic_write(args.out, result.data)
        except OSError as exc:  # a BoundaryError says "code: message" itself
            error(f"{args.out}: {exc}")
            return 2
    for warning in result.warnings:
        error(f"warning: {warning}")
    status = "matches" if result.matches else f"DOES NOT match {result.expected_sha256}"
    write(
        f"replayed {result.applied} applied op(s), skipped {result.skipped}; final sha256 "
        f"{result.final_sha256} {status}\n"
    )
    return 0 if result.matches else 1


def cmd_transcript_verify(args: argparse.Namespace) -> int:
    """Settle an interrupted write of the document, check every record and the chain, then
    compare the document with the chain tip (a change outside the log is its own finding).

    Settling is what any patch would do first, so it runs whether or not the transcript
    exists yet: a document's first edit killed right after the rename has a pending record
    and no ``.patches`` file, and verify completes it. ``--json`` always prints a body (a
    fault is ``{ok: false, code, error}``) and says what recovery did."""
    import hashlib

    from ..noma.boundary import BoundaryError, place
    from ..noma.commit import touch
    from ..noma.transcript import AuditReport, audit, compare_document

    transcript = Path(args.transcript)
    document = (
        Path(args.transcript[: -len(".patches")]) if args.transcript.endswith(".patches") else None
    )
    recovery = None
    try:
        if document is not None:
            recovery = touch(document)
        if transcript.exists() or transcript.is_symlink():
            with place(transcript) as where:
                where.folder.check_file(where.name)
            report = audit(transcript)
        elif recovery is not None or (document is not None and document.exists()):
            report = AuditReport()  # no records yet: an empty log
        else:
            raise FileNotFoundError(2, "No such file or directory", str(transcript))
        if document is not None:
            try:
                with place(document) as where:
                    data = where.folder.read_bytes(where.name)
                doc_sha = hashlib.sha256(data).hexdigest() if data is not None else None
            except FileNotFoundError:
                doc_sha = None
            compare_document(report, doc_sha)
    except OSError as exc:
        code = exc.code if isinstance(exc, BoundaryError) else "io_error"
        message = exc.message if isinstance(exc, BoundaryError) else (exc.strerror or str(exc))
        error(f"{args.transcript}: {code}: {message}")
        if args.json:
            write_json(
                {
                    "ok": False,
                    "code": code,
                    "error": f"{args.transcript}: {message}",
                    "recovery": recovery.to_json() if recovery is not None else None,
                    "recovered": recovery.describe() if recovery is not None else None,
                }
            )
        return 2
    if recovery is not None:
        error(f"{document}: {recovery.describe()}")
    if not args.json:
        for number, warning in report.warnings:
            error(f"warning: {args.transcript}:{number}: {warning}")
    chain_ok = not report.problems
    untrusted = recovery is not None and recovery.untrusted is not None
    ok = report.ok and not untrusted
    if args.json:
        write_json(
            {
                "ok": ok,
                "lines": report.lines,
                "first_broken_line": report.first_broken_line,
                "problems": [{"line": n, "problem": p} for n, p in report.problems],
                "warnings": [{"line": n, "warning": w} for n, w in report.warnings],
                "chain_intact": chain_ok,
                "document_matches_chain": report.outside_change is None,
                "outside_change": report.outside_change,
                "recovered": recovery.describe() if recovery is not None else None,
                "recovery": recovery.to_json() if recovery is not None else None,
            }
        )
        return 0 if ok else 1
    out: list[str] = []
    if chain_ok:
        out.append(f"{args.transcript}: {report.lines} record(s), hash chain intact")
    else:
        out += [f"{args.transcript}:{n}: {p}" for n, p in report.problems]
        out.append(f"first broken line: {report.first_broken_line}")
    if report.outside_change is not None:
        out.append(f"{document}: CHANGED OUTSIDE THE LOG: {report.outside_change}")
    if untrusted:
        out.append(f"{document}: UNTRUSTED PENDING RECORD LEFT ALONE")
    write("\n".join(out) + "\n")
    return 0 if ok else 1


def cmd_capabilities(args: argparse.Namespace) -> int:
    from ..noma.patch.capabilities import describe, load_descriptor

    descriptor = load_descriptor(args.file)
    write_json(describe(descriptor))
    return 0 if not descriptor.problems else 1


def cmd_ops(args: argparse.Namespace) -> int:
    """``noma ops FILE [ID]``: the ops that can address a block, as JSON."""
    from ..noma.files import DocumentIOError, read_document
    from ..noma.ids import index
    from ..noma.patch.applicable import applicable_ops

    try:
        _source, doc = read_document(args.file)
    except DocumentIOError as exc:
        return _system_fault(exc)
    idx = index(doc)
    if args.id is None:
        write_json({ident: applicable_ops(doc, node) for ident, node in idx.first.items()})
        return 0
    node = idx.first.get(args.id)
    if node is None:
        owner = idx.alias_owner.get(args.id)
        hint = f" (an alias of '{owner}'; ops address canonical ids)" if owner else ""
        error(f"target_missing: no block with id '{args.id}'{hint}")
        return 1
    write_json({"id": args.id, "ops": applicable_ops(doc, node)})
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``patch``, ``proof``, ``replay``, ``transcript verify``, ``capabilities``, ``ops``."""
    p = sub.add_parser("patch", help="apply patch ops (atomic list) with a transcript record")
    p.add_argument("file")
    add_request_arguments(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--inplace", action="store_true", help="rewrite FILE (atomically)")
    where.add_argument("--out", metavar="PATH", help="write the result to PATH")
    p.add_argument("--json", action="store_true", help="print the patch_block result shape")
    p.set_defaults(func=cmd_patch)

    p = sub.add_parser("proof", help="preview ops: diff and diagnostics delta, nothing written")
    p.add_argument("file")
    add_request_arguments(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_proof)

    p = sub.add_parser("replay", help="rebuild a document from its base and transcript")
    p.add_argument("transcript", metavar="DOC.patches")
    p.add_argument("--base", required=True, metavar="BASE.noma")
    p.add_argument("--out", metavar="PATH", help="write the replayed document here")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("transcript", help="transcript tools")
    tsub = p.add_subparsers(dest="transcript_command", metavar="ACTION", required=True)
    t = tsub.add_parser("verify", help="check records and the prev_entry_sha256 chain")
    t.add_argument("transcript", metavar="DOC.patches")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_transcript_verify)

    p = sub.add_parser("capabilities", help="validate a document's capability sidecar")
    p.add_argument("file")
    p.set_defaults(func=cmd_capabilities)

    p = sub.add_parser("ops", help="which patch ops apply to a block (or to every block)")
    p.add_argument("file")
    p.add_argument("id", nargs="?", help="a canonical id; omit for every block with an id")
    p.set_defaults(func=cmd_ops)
