"""Write-ahead commit: an applied edit and its transcript records become durable together.

The promise (architecture, "Nothing lost, nothing unrecorded"): a crash at any instant
leaves either the old document with no record of the op, or the new document with its
record, once the document is next touched. The order that keeps it, for a document
``doc.noma`` (every step is a named fault point, see `core.noma.faults`):

1. write ``.doc.noma.pending``: the records, the old and new sha256, the transcript's size
   and the temp file's name; fsync it;
2. write the new bytes to ``.doc.noma.<hex>.tmp``; fsync it; fsync the directory;
3. rename the temp file over ``doc.noma``; fsync the directory;
4. append the records to ``doc.noma.patches``; fsync it;
5. remove the pending file.

Whoever next takes the document's lock calls `recover` first. A pending file whose new
sha256 is the document's current one means the rename happened: the transcript is cut back
to its recorded size (dropping a torn or complete earlier append) and the records are
appended, so they are there exactly once. Any other state means the rename never happened:
the pending file and its temp file are removed and the document is the old one, with no
record. A torn pending file (a crash while writing it) is from before step 2, so it is
discarded the same way.

Records with no document change (rejected and noop ops) take the same path without steps
2 and 3, so a crash mid-append never leaves half a record either.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bounded import load_json_bounded
from .faults import fault
from .storage import document_lock, real_path
from .transcript import append_records, transcript_path

PENDING_VERSION = 1


class TranscriptWriteError(Exception):
    """The document was written but its records could not be appended (yet)."""


@dataclass(slots=True)
class Recovery:
    """What `recover` found and did, for surfaces that want to say so."""

    completed: bool  # the new document was kept and its records appended
    discarded: bool  # the edit never reached the document; its pending state was dropped
    changed_outside: bool = False  # the document matched neither side of the pending edit
    removed_temp_files: int = 0
    transcript_error: str | None = None  # the records could not be appended

    def describe(self) -> str:
        if self.transcript_error is not None:
            return (
                "an interrupted edit reached the document but its records could not be "
                f"appended: {self.transcript_error}"
            )
        if not self.completed and not self.discarded:
            return f"removed {self.removed_temp_files} temp file(s) of interrupted writes"
        if self.completed:
            return "completed an interrupted edit: its transcript records were appended"
        if self.changed_outside:
            return (
                "dropped an interrupted edit: the document has changed since, outside the "
                "transcript"
            )
        return "dropped an interrupted edit that never reached the document"


def pending_path(target: Path) -> Path:
    return target.parent / f".{target.name}.pending"


def _temp_name(target: Path) -> str:
    return f".{target.name}.{secrets.token_hex(6)}.tmp"


def _temp_pattern(target: Path) -> re.Pattern[str]:
    return re.compile(r"\." + re.escape(target.name) + r"\.[0-9a-f]{1,64}\.tmp\Z")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _file_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def commit(
    target: str | Path,
    data: bytes | None,
    records: list[dict[str, Any]],
    *,
    pre_sha256: str | None,
    post_sha256: str,
) -> None:
    """Replace ``target`` with ``data`` (None: leave it) and append ``records``, write-ahead.

    The caller holds the document lock and has called `recover`. ``pre_sha256`` is the
    target's current sha256 (None when it does not exist yet); ``post_sha256`` is the
    sha256 of ``data`` (of the current bytes when ``data`` is None).
    """
    target = real_path(target)
    directory = target.parent
    transcript = transcript_path(target)
    try:
        transcript_size = transcript.stat().st_size
    except FileNotFoundError:
        transcript_size = 0
    temp = _temp_name(target) if data is not None else None
    pending = pending_path(target)
    state = {
        "pending_version": PENDING_VERSION,
        "pre_sha256": pre_sha256,
        "post_sha256": post_sha256,
        "transcript_size": transcript_size,
        "temp": temp,
        "records": records,
    }
    payload = json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", errors="surrogateescape"
    )
    fd = os.open(pending, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _write_all(fd, payload)
        fault("pending.written")
        os.fsync(fd)
    finally:
        os.close(fd)
    fault("pending.synced")
    if data is not None and temp is not None:
        _replace(target, directory / temp, data)
    try:
        append_records(transcript, records, torn_fault=True)
    except OSError as exc:
        # §B.6: a transcript failure never fails the patch. The pending record stays, so
        # the next touch appends it if the transcript has become writable.
        raise TranscriptWriteError(str(exc)) from exc
    fault("appended")
    os.unlink(pending)
    fault("pending.removed")


def _replace(target: Path, temp: Path, data: bytes) -> None:
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fault("tmp.written")
    _fsync_dir(target.parent)
    fault("dir.synced.before")
    os.replace(temp, target)
    fault("renamed")
    _fsync_dir(target.parent)
    fault("dir.synced")


def _load_pending(raw: bytes) -> dict[str, Any] | None:
    try:
        state = load_json_bounded(raw.decode("utf-8", errors="surrogateescape"))
    except (UnicodeDecodeError, ValueError):  # ValueError: not JSON, or beyond the bounds
        return None
    if not isinstance(state, dict) or state.get("pending_version") != PENDING_VERSION:
        return None
    records = state.get("records")
    size = state.get("transcript_size")
    if not (
        isinstance(records, list)
        and all(isinstance(r, dict) for r in records)
        and isinstance(size, int)
        and size >= 0
        and isinstance(state.get("post_sha256"), str)
    ):
        return None
    return state


def recover(target: str | Path) -> Recovery | None:
    """Finish or drop an interrupted commit of ``target``; None when there was none.

    The caller holds the document lock (so no commit is in flight).
    """
    target = real_path(target)
    pending = pending_path(target)
    try:
        raw = pending.read_bytes()
    except FileNotFoundError:
        return None
    state = _load_pending(raw)
    report = Recovery(completed=False, discarded=True)
    current = _file_sha256(target)
    if state is not None and current == state["post_sha256"]:
        transcript = transcript_path(target)
        size = state["transcript_size"]
        try:
            if transcript.stat().st_size > size:
                os.truncate(transcript, size)
        except FileNotFoundError:
            pass
        try:
            append_records(transcript, state["records"])
            report = Recovery(completed=True, discarded=False)
        except OSError as exc:
            report = Recovery(completed=False, discarded=True, transcript_error=str(exc))
    elif state is not None:
        pre = state.get("pre_sha256")
        report.changed_outside = current != pre
    report.removed_temp_files = remove_temp_files(target)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(pending)
    _fsync_dir(target.parent)
    return report


def remove_temp_files(target: Path) -> int:
    """Delete ``.<name>.<hex>.tmp`` files of interrupted writes (caller holds the lock)."""
    pattern = _temp_pattern(target)
    prefix = f".{target.name}."
    removed = 0
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.startswith(prefix) and pattern.match(entry.name):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                os.unlink(entry.path)
                removed += 1
    return removed


def touch(target: str | Path) -> Recovery | None:
    """Take the document's lock and settle any interrupted write: what a surface does when
    it next touches a document without patching it (``transcript verify``, the app opening
    it). Stray temp files are removed even when no pending record names them."""
    target = real_path(target)
    if not target.parent.is_dir():
        return None
    with document_lock(target):
        report = recover(target)
        removed = remove_temp_files(target)
    if report is None and removed:
        report = Recovery(completed=False, discarded=False, removed_temp_files=removed)
    elif report is not None:
        report.removed_temp_files += removed
    return report
