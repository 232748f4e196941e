"""v1.0 transcript records (§5): building, appending with a hash chain, reading, auditing.

A transcript is JSONL next to its document (``thesis.noma.patches``), one record per
attempted op, append-only. Each record carries ``prev_entry_sha256`` (the sha256 of the
previous line's raw bytes, newline included), so editing or deleting a line breaks the
chain at the next one.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import __version__
from .boundary import Folder
from .bounded import ContentRefused, load_json_bounded
from .diagnostics import SEVERITY_RANK
from .faults import fault

PROTOCOL_VERSION = "1.0"
TOOL_VERSION = __version__
REQUIRED_FIELDS = (
    "protocol_version",
    "tool_version",
    "op_id",
    "ts",
    "actor",
    "doc_uri",
    "pre_sha256",
    "post_sha256",
    "pre_sha",
    "post_sha",
    "op",
    "patch_result",
    "pre_validation",
    "post_validation",
)
RESULTS = ("applied", "rejected", "noop")
SUMMARIES = ("ok", "warn", "error")


def transcript_path(doc_path: str | Path) -> Path:
    return Path(str(doc_path) + ".patches")


def now_iso() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def new_op_id() -> str:
    return str(uuid.uuid4())


def line_sha256(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def encode_record(record: dict[str, Any]) -> bytes:
    """One JSONL line. U+2028/U+2029 are escaped: JSON allows them raw, but readers that
    split lines the Unicode way (``str.splitlines``, JavaScript) would cut a record there."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return (text + "\n").encode("utf-8", errors="surrogateescape")


def _last_line(fd: int) -> bytes | None:
    """The raw last line of an open file (with its newline, if any), read from the end."""
    return last_line_before(fd, os.fstat(fd).st_size)


def chain_bytes(last: bytes | None, records: list[dict[str, Any]]) -> bytes:
    """The bytes that append ``records`` after a transcript whose last line is ``last``
    (filling in each record's ``prev_entry_sha256``)."""
    prefix = b""
    if last is not None and not last.endswith(b"\n"):
        prefix = b"\n"  # a torn final line from a crash: start a fresh line after it
        last = last + b"\n"
    chunks = [prefix]
    for record in records:
        if last is not None:
            record["prev_entry_sha256"] = line_sha256(last)
        line = encode_record(record)
        chunks.append(line)
        last = line
    return b"".join(chunks)


def last_line_before(fd: int, size: int) -> bytes | None:
    """The raw last line of the first ``size`` bytes of an open file."""
    if size == 0:
        return None
    pos = size
    buf = b""
    while pos > 0:
        step = min(8192, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        cut = buf.rfind(b"\n", 0, len(buf) - 1)
        if cut != -1:
            return buf[cut + 1 :]
    return buf


def append_records(
    folder: Folder, name: str, records: list[dict[str, Any]], *, torn_fault: bool = False
) -> list[dict[str, Any]]:
    """Chain and append ``records`` to ``name`` in ``folder``; returns them with
    ``prev_entry_sha256`` filled in.

    The transcript is opened through the boundary (`core.noma.boundary`): a symlink planted
    in its place is refused, never followed. The caller holds the document lock, so no
    other writer appends in between. ``torn_fault`` splits the write in two around the
    ``append.torn`` fault point, so a test can crash the process with half a record on disk.
    """
    fd = folder.open_file(name, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        data = chain_bytes(_last_line(fd), records)
        view = memoryview(data)
        if torn_fault:
            half = len(view) // 2
            while len(view) > len(data) - half:
                view = view[os.write(fd, view[: len(view) - (len(data) - half)]) :]
            fault("append.torn")
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return records


# -- reading and auditing ---------------------------------------------------------------


@dataclass(slots=True)
class TranscriptLine:
    number: int  # 1-based line number in the file
    raw: bytes
    record: dict[str, Any] | None
    problem: str | None = None
    # Inconsistencies that do not touch integrity (see `record_warnings`).
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class AuditReport:
    lines: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    chain_tip: str | None = None  # post_sha256 of the last valid record
    # Set when the document's bytes are not the chain tip: changed outside the log.
    outside_change: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and self.outside_change is None

    @property
    def first_broken_line(self) -> int | None:
        return self.problems[0][0] if self.problems else None


def read_lines(path: Path) -> list[TranscriptLine]:
    return parse_lines(path.read_bytes())


def parse_lines(data: bytes) -> list[TranscriptLine]:
    out = []
    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        if not raw.strip():
            out.append(TranscriptLine(number, raw, None, "blank line"))
            continue
        try:
            record = load_json_bounded(raw.decode("utf-8"))
        except ContentRefused as exc:  # too deep, or a number too long to convert
            out.append(TranscriptLine(number, raw, None, f"cannot be read ({exc})"))
            continue
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            out.append(TranscriptLine(number, raw, None, f"not valid JSON ({exc})"))
            continue
        if not isinstance(record, dict):
            out.append(TranscriptLine(number, raw, None, "not a JSON object"))
            continue
        problem = record_problem(record)
        warnings = record_warnings(record) if problem is None else []
        out.append(TranscriptLine(number, raw, record, problem, warnings))
    return out


def is_phase0(record: dict[str, Any]) -> bool:
    return "protocol_version" not in record and record.get("v") == 1


def record_problem(record: dict[str, Any]) -> str | None:
    """Why a record cannot be read as a v1.0 record, or None (§5.2, §5.6, §5.7).

    Only what integrity and replay depend on is a problem: the version, the required
    fields, the hashes (the display ones must agree with the full ones) and the result.
    Everything else another implementation may write differently (summaries, actor shape)
    is a warning (`record_warnings`), so its transcripts replay and verify here.
    """
    if is_phase0(record):
        return "a Phase 0 record (v: 1): not a v1.0 transcript record and cannot be upgraded (§5.7)"
    if record.get("protocol_version") != PROTOCOL_VERSION:
        return f"protocol_version is {record.get('protocol_version')!r}, expected '1.0'"
    missing = [f for f in REQUIRED_FIELDS if f not in record]
    if missing:
        return "missing required field(s): " + ", ".join(missing)
    for key in ("pre_sha256", "post_sha256"):
        value = record[key]
        if not (isinstance(value, str) and len(value) == 64 and _is_hex(value)):
            return f"{key} is not a 64-character lowercase sha256"
    for short, full in (("pre_sha", "pre_sha256"), ("post_sha", "post_sha256")):
        if record[short] != record[full][:8]:
            # Display only, but a record whose two hashes disagree was altered.
            return f"{short} is not the first 8 characters of {full}"
    if record["patch_result"] not in RESULTS:
        return f"patch_result {record['patch_result']!r} is not applied, rejected or noop"
    if record["patch_result"] == "applied" and not isinstance(record["op"], dict):
        return "an applied record's op is not an op object"
    return None


def record_warnings(record: dict[str, Any]) -> list[str]:
    """Inconsistencies in a readable record that do not change what it did (§5.6 readers
    use only the full hashes for integrity): summaries that do not derive from the
    diagnostics (the reference writes ``pre_validation: "warn"`` beside an error-severity
    pre diagnostic on a rejected op), a non-applied record whose hashes differ, the actor's
    shape, a non-null signature."""
    out: list[str] = []
    result = record["patch_result"]
    if result != "applied" and record["pre_sha256"] != record["post_sha256"]:
        out.append(
            f"a {result} record should have post_sha256 equal to pre_sha256 (§5.4); "
            "read as no change"
        )
    diagnostics = record.get("diagnostics")
    for phase, key in (("pre", "pre_validation"), ("post", "post_validation")):
        if record[key] not in SUMMARIES:
            out.append(f"{key} {record[key]!r} is not ok, warn or error")
        elif isinstance(diagnostics, list):
            derived = _derive(diagnostics, phase)
            if derived != record[key]:
                out.append(
                    f"{key} is {record[key]!r} but its diagnostics derive {derived!r} (§4.2)"
                )
    actor = record["actor"]
    if not isinstance(actor, dict) or actor.get("kind") not in ("human", "agent", "tool"):
        out.append("actor should be an object with kind human, agent or tool")
    if "signature" in record and record["signature"] is not None:
        out.append("signature is reserved and should be null in v1.0")
    return out


def state_after(record: dict[str, Any]) -> str:
    """The document's sha256 after a readable record: ``post_sha256`` for an applied op,
    ``pre_sha256`` for a rejected or noop one (it changed nothing, whatever it says)."""
    return str(record["post_sha256" if record["patch_result"] == "applied" else "pre_sha256"])


def _is_hex(value: str) -> bool:
    return all(c in "0123456789abcdef" for c in value)


def _derive(diagnostics: list[Any], phase: str) -> str:
    worst = -1
    for d in diagnostics:
        if isinstance(d, dict) and d.get("phase") == phase:
            worst = max(worst, SEVERITY_RANK.get(d.get("severity", ""), -1))
    return "error" if worst == 2 else "warn" if worst == 1 else "ok"


def compare_document(report: AuditReport, document_sha256: str | None) -> None:
    """Record whether the document is the state the transcript's last record left."""
    if report.chain_tip is None:
        return
    if document_sha256 is None:
        report.outside_change = (
            "the document is missing, but the transcript's last record left it at "
            f"sha256 {report.chain_tip[:12]}…"
        )
    elif document_sha256 != report.chain_tip:
        report.outside_change = (
            f"the document (sha256 {document_sha256[:12]}…) is not the state the transcript's "
            f"last record left (sha256 {report.chain_tip[:12]}…): it was changed outside the "
            "log"
        )


def audit(path: Path) -> AuditReport:
    """Check every record and the ``prev_entry_sha256`` chain; report each broken line."""
    report = AuditReport()
    lines = read_lines(path)
    report.lines = len(lines)
    previous: bytes | None = None
    chained = False
    for line in lines:
        if line.problem:
            report.problems.append((line.number, line.problem))
        elif line.record is not None:
            report.warnings += [(line.number, w) for w in line.warnings]
            report.chain_tip = state_after(line.record)
            want = line.record.get("prev_entry_sha256")
            if want is not None:
                chained = True
                if previous is None:
                    report.problems.append(
                        (line.number, "prev_entry_sha256 is set but there is no previous line")
                    )
                elif want != line_sha256(
                    previous if previous.endswith(b"\n") else previous + b"\n"
                ):
                    report.problems.append(
                        (
                            line.number,
                            f"prev_entry_sha256 does not match line {line.number - 1}: "
                            f"line {line.number - 1} was changed, removed or reordered",
                        )
                    )
            elif previous is not None and chained:
                report.problems.append(
                    (line.number, "the hash chain stops here: prev_entry_sha256 is missing")
                )
        previous = line.raw
    return report
