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
appended, so they are there exactly once.

The pending file sits inside the workspace, which is untrusted input: anyone could have
written one. Recovery acts only on a record signed with the user's own key
(`core.noma.pending_key`, HMAC-SHA256 over the document's identity and the record), and
every file is opened through the boundary (`core.noma.boundary`): a transcript, pending or
temp file that is a symlink is refused, never followed. A record that is complete but not
signed by this user is left alone and reported (`Recovery.untrusted`). The size the
transcript is cut back to must be one it had: no larger than it is now and ending with the
bytes the record saw there (``transcript_tail``). Any other state means the rename never happened:
the pending file and its temp file are removed and the document is the old one, with no
record. A torn pending file (a crash while writing it) is from before step 2, so it is
discarded the same way.

Records with no document change (rejected and noop ops) take the same path without steps
2 and 3, so a crash mid-append never leaves half a record either.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .boundary import BoundaryError, Folder, Place, place
from .bounded import load_json_bounded
from .faults import fault
from .pending_key import sign, verify
from .transcript import append_records, chain_bytes, last_line_before
from .warm_files import Written, coarse_now

PENDING_VERSION = 2
TAIL_BYTES = 4096


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
    # A pending record this user's key did not sign (forged, copied from another
    # document, or another user's): why it was left alone, untouched and unused.
    untrusted: str | None = None

    def describe(self) -> str:
        if self.untrusted is not None:
            return (
                "left alone a pending record this user did not write "
                f"({self.untrusted}); the document and its transcript were not touched"
            )
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

    def to_json(self) -> dict[str, Any]:
        return {
            "completed": self.completed,
            "discarded": self.discarded,
            "changed_outside": self.changed_outside,
            "removed_temp_files": self.removed_temp_files,
            "transcript_error": self.transcript_error,
            "untrusted_pending": self.untrusted,
            "message": self.describe(),
        }


def pending_name(name: str) -> str:
    return f".{name}.pending"


def pending_path(target: Path) -> Path:
    return target.parent / pending_name(target.name)


def transcript_name(name: str) -> str:
    return name + ".patches"


def temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(6)}.tmp"


def _temp_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"\." + re.escape(name) + r"\.[0-9a-f]{1,64}\.tmp\Z")


def _identity(where: Place) -> str:
    """What a pending record is bound to: the document's folder (resolved) and name, so a
    record copied beside another document does not verify there."""
    return os.path.join(os.path.realpath(where.folder.path), where.name)


def _sha256_of(folder: Folder, name: str) -> str | None:
    data = folder.read_bytes(name)
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _tail(fd: int, size: int) -> str:
    start = max(0, size - TAIL_BYTES)
    return hashlib.sha256(os.pread(fd, size - start, start)).hexdigest()


def commit(
    where: Place,
    data: bytes | None,
    records: list[dict[str, Any]],
    *,
    pre_sha256: str | None,
    post_sha256: str,
) -> Written | None:
    """Replace the document at ``where`` with ``data`` (None: leave it) and append
    ``records``, write-ahead. Returns what the warm path needs to trust a later stat of
    the new file without reading it (`core.noma.warm_files.Written`; None when no
    document bytes were written).

    The caller holds the document lock and has called `recover`. ``pre_sha256`` is the
    target's current sha256 (None when it does not exist yet); ``post_sha256`` is the
    sha256 of ``data`` (of the current bytes when ``data`` is None).
    """
    folder, name = where.folder, where.name
    transcript = transcript_name(name)
    transcript_size = 0
    tail = _tail_of(folder, transcript)
    if tail is not None:
        transcript_size, tail_sha = tail
    else:
        tail_sha = hashlib.sha256(b"").hexdigest()
    temp = temp_name(name) if data is not None else None
    state = {
        "pending_version": PENDING_VERSION,
        "pre_sha256": pre_sha256,
        "post_sha256": post_sha256,
        "transcript_size": transcript_size,
        "transcript_tail": tail_sha,
        "temp": temp,
        "records": records,
    }
    payload = json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", errors="surrogateescape"
    )
    signed = payload + b"\n" + sign(payload, _identity(where)).encode("ascii") + b"\n"
    fd = folder.open_file(pending_name(name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _write_all(fd, signed)
        fault("pending.written")
        os.fsync(fd)
    finally:
        os.close(fd)
    fault("pending.synced")
    written = _replace(folder, name, temp, data) if data is not None and temp else None
    try:
        append_records(folder, transcript, records, torn_fault=True)
    except OSError as exc:
        # §B.6: a transcript failure never fails the patch. The pending record stays, so
        # the next touch appends it if the transcript has become writable.
        raise TranscriptWriteError(str(exc)) from exc
    fault("appended")
    folder.unlink(pending_name(name))
    fault("pending.removed")
    return written


def _tail_of(folder: Folder, name: str) -> tuple[int, str] | None:
    """The transcript's size and the sha256 of its last bytes (None when it is absent or
    cannot be opened: the append then fails and says why, §B.6)."""
    try:
        fd = folder.open_file(name, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        return size, _tail(fd, size)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _replace(folder: Folder, name: str, temp: str, data: bytes) -> Written:
    st = folder.check_file(name)
    mode = st.st_mode & 0o7777 if st is not None else 0o644
    synced = folder.write_new(temp, data, mode)
    fault("tmp.written")
    folder.fsync()
    fault("dir.synced.before")
    before = coarse_now()
    folder.replace(temp, name)
    after = coarse_now()
    fault("renamed")
    folder.fsync()
    fault("dir.synced")
    return Written(synced.st_ino, synced.st_dev, synced.st_size, synced.st_mtime_ns, before, after)


def _load_pending(raw: bytes, identity: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the state, None) for a record this user signed; (None, why) for a complete record
    that is not (left alone); (None, None) for a torn one (a crash while writing it)."""
    body, _, tag = raw.rstrip(b"\n").rpartition(b"\n")
    if not raw.endswith(b"\n") or not body:
        if raw.lstrip().startswith(b"{") and raw.rstrip().endswith(b"}"):
            return None, "it carries no signature (written by another tool or version)"
        return None, None  # torn: the crash came before the record was complete
    try:
        text_tag = tag.decode("ascii")
    except UnicodeDecodeError:
        return None, "its signature is not readable"
    if not verify(body, identity, text_tag):
        return None, "its signature does not match this user's key and this document"
    try:
        state = load_json_bounded(body.decode("utf-8", errors="surrogateescape"))
    except (UnicodeDecodeError, ValueError):  # ValueError: not JSON, or beyond the bounds
        return None, "it is not readable"
    if not isinstance(state, dict) or state.get("pending_version") != PENDING_VERSION:
        return None, "unknown pending_version"
    records = state.get("records")
    size = state.get("transcript_size")
    if not (
        isinstance(records, list)
        and all(isinstance(r, dict) for r in records)
        and isinstance(size, int)
        and size >= 0
        and isinstance(state.get("post_sha256"), str)
        and isinstance(state.get("transcript_tail"), str)
    ):
        return None, "its fields are not a pending record's"
    return state, None


def recover(where: Place) -> Recovery | None:
    """Finish or drop an interrupted commit of the document at ``where``; None when
    there was none.

    The caller holds the document lock (so no commit is in flight).
    """
    folder, name = where.folder, where.name
    try:
        raw = folder.read_bytes(pending_name(name))
    except BoundaryError as exc:
        return Recovery(completed=False, discarded=False, untrusted=str(exc))
    if raw is None:
        return None
    state, untrusted = _load_pending(raw, _identity(where))
    if untrusted is not None:
        return Recovery(completed=False, discarded=False, untrusted=untrusted)
    report = Recovery(completed=False, discarded=True)
    current = _sha256_of(folder, name)
    if state is not None and current == state["post_sha256"]:
        try:
            transcript = transcript_name(name)
            size, tail = state["transcript_size"], state["transcript_tail"]
            _cut_back(folder, transcript, size, tail, state["records"])
            append_records(folder, transcript, state["records"])
            report = Recovery(completed=True, discarded=False)
        except OSError as exc:
            report = Recovery(completed=False, discarded=True, transcript_error=str(exc))
    elif state is not None:
        pre = state.get("pre_sha256")
        report.changed_outside = current != pre
    report.removed_temp_files = remove_temp_files(where)
    folder.unlink(pending_name(name))
    folder.fsync()
    return report


def _cut_back(
    folder: Folder, name: str, size: int, tail: str, records: list[dict[str, Any]]
) -> None:
    """Drop what the interrupted append left after ``size`` bytes, and only that: the
    transcript must be longer than ``size``, its bytes up to there must end as the pending
    record saw them, and everything after must be (a prefix of) exactly the bytes that
    append writes. Anything else was not written by the append: it is not cut (never cut to
    a size the transcript never had, never extend it)."""
    try:
        fd = folder.open_file(name, os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        now = os.fstat(fd).st_size
        if now <= size or _tail(fd, size) != tail:
            return
        ours = chain_bytes(last_line_before(fd, size), copy.deepcopy(records))
        extra = os.pread(fd, min(now - size, len(ours) + 1), size)
        if len(extra) == now - size and ours.startswith(extra):
            os.ftruncate(fd, size)
            os.fsync(fd)
    finally:
        os.close(fd)


def remove_temp_files(where: Place) -> int:
    """Delete ``.<name>.<hex>.tmp`` regular files of interrupted writes (caller holds the
    lock). A directory or symlink by such a name is not ours: it is left alone."""
    pattern = _temp_pattern(where.name)
    prefix = f".{where.name}."
    removed = 0
    try:
        names = where.folder.names()
    except OSError:
        return 0
    for entry in names:
        if entry.startswith(prefix) and pattern.match(entry):
            try:
                if where.folder.check_file(entry) is None:
                    continue
            except BoundaryError:
                continue
            if where.folder.unlink(entry):
                removed += 1
    return removed


def touch(target: str | Path, root: str | Path | None = None) -> Recovery | None:
    """Take the document's lock and settle any interrupted write: what a surface does when
    it next touches a document without patching it (``transcript verify``, the app opening
    it). Stray temp files are removed even when no pending record names them. Refuses
    (`BoundaryError`) a document that is a symlink or sits behind one below ``root``."""
    try:
        where = place(target, root)
    except FileNotFoundError:
        return None  # no folder: nothing was ever written there
    with where, where.folder.locked():
        report = recover(where)
        removed = remove_temp_files(where)
    if report is None and removed:
        report = Recovery(completed=False, discarded=False, removed_temp_files=removed)
    elif report is not None:
        report.removed_temp_files += removed
    return report
