"""A document's transcript as the transcript pane shows it: the engine's parsed lines, the
audit of the hash chain, and one display row per line.

Reading and auditing run off the UI thread; the pane only appends the rows it has not
shown yet, so a transcript that grows by one record costs one row.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.noma.api import (
    TARGET_FIELD,
    AuditReport,
    TranscriptLine,
    audit,
    encode_record,
    line_sha256,
    read_lines,
    record_problem,
    record_warnings,
    state_after,
    transcript_path,
)

DRIFT_CODE = "base_sha_drift"


@dataclass(slots=True)
class TranscriptRow:
    """The columns of one transcript line: time, actor, op, result, shas, drift."""

    number: int
    time: str
    actor: str
    op: str
    result: str
    shas: str
    drift: bool
    record: dict[str, Any] | None
    problem: str | None
    raw: bytes


@dataclass(slots=True)
class TranscriptSnapshot:
    path: Path
    rows: list[TranscriptRow] = field(default_factory=list)
    report: AuditReport | None = None
    exists: bool = False
    kinds: dict[str, str] = field(default_factory=dict)  # op_id -> edit/revert/redo


def short_time(ts: Any) -> str:
    """``2026-05-11T14:32:00.000Z`` -> ``05-11 14:32:00`` (UTC, as recorded)."""
    if not isinstance(ts, str) or len(ts) < 19:
        return "?"
    return f"{ts[5:10]} {ts[11:19]}"


def op_summary(op: Any) -> str:
    """The op name and the id it addresses (``replace_body ev-1``)."""
    if not isinstance(op, dict):
        return "?"
    name = op.get("op")
    if not isinstance(name, str):
        return "?"
    target = op.get(TARGET_FIELD.get(name, "id"))
    return f"{name} {target}" if isinstance(target, str) else name


def failure_code(record: dict[str, Any]) -> str | None:
    """The §3.5 code a rejected record carries (the first error that is not drift)."""
    for d in record.get("diagnostics") or []:
        if isinstance(d, dict) and d.get("severity") == "error" and d.get("phase") == "pre":
            code = d.get("code")
            if isinstance(code, str) and code != DRIFT_CODE:
                return code
    return None


def has_drift(record: dict[str, Any]) -> bool:
    return any(
        isinstance(d, dict) and d.get("code") == DRIFT_CODE for d in record.get("diagnostics") or []
    )


def to_row(line: TranscriptLine) -> TranscriptRow:
    record = line.record
    if record is None:
        return TranscriptRow(
            line.number, "?", "?", "?", "invalid", "", False, None, line.problem, line.raw
        )
    actor = record.get("actor")
    who = f"{actor.get('kind', '?')}:{actor.get('name', '?')}" if isinstance(actor, dict) else "?"
    result = str(record.get("patch_result", "?"))
    if result == "rejected":
        code = failure_code(record)
        if code:
            result = f"rejected {code}"
    if line.problem:
        result = f"invalid ({result})"
    shas = f"{record.get('pre_sha', '?')}→{record.get('post_sha', '?')}"
    return TranscriptRow(
        line.number,
        short_time(record.get("ts")),
        who,
        op_summary(record.get("op")),
        result,
        shas,
        has_drift(record),
        record,
        line.problem,
        line.raw,
    )


def load_transcript(doc_path: Path) -> TranscriptSnapshot:
    """Every line of the document's transcript and the chain audit (empty if none)."""
    from .undo_journal import UndoJournal

    path = transcript_path(doc_path)
    if not path.is_file():
        return TranscriptSnapshot(path)
    lines = read_lines(path)
    kinds = UndoJournal(doc_path).kinds()
    return TranscriptSnapshot(path, [to_row(line) for line in lines], audit(path), True, kinds)


def extend(
    snapshot: TranscriptSnapshot, records: list[dict[str, Any]]
) -> TranscriptSnapshot | None:
    """``snapshot`` with ``records`` added: the records an apply of this app just appended
    (chained by the engine), so the pane grows without reading the file again. None when
    they do not follow on from the last line shown (someone else appended meanwhile, the
    last line was torn) or one has a problem: then the file is read and audited whole."""
    rows = list(snapshot.rows)
    base = snapshot.report or AuditReport()
    report = replace(base, problems=list(base.problems), warnings=list(base.warnings))
    last = rows[-1].raw if rows else None
    for record in records:
        want = record.get("prev_entry_sha256")
        if last is None:
            if want is not None:
                return None
        elif not last.endswith(b"\n") or want != line_sha256(last):
            return None
        if record_problem(record) is not None:
            return None
        raw = encode_record(record)
        number = len(rows) + 1
        line = TranscriptLine(number, raw, record, None, record_warnings(record))
        rows.append(to_row(line))
        report.lines += 1
        report.warnings += [(number, w) for w in line.warnings]
        report.chain_tip = state_after(record)
        last = raw
    return TranscriptSnapshot(snapshot.path, rows, report, bool(rows), dict(snapshot.kinds))
