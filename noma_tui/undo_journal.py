"""The undo journal: what undo needs after a restart, kept in the user's state dir.

Reverting a record (`core.noma.revert.inverse`) needs the document as it was before the
record, whose sha256 the record names (``pre_sha256``). A session keeps the versions it
has seen in memory; after a restart they are gone, so every version change this app
makes or watches is journaled as a *reverse splice*: the text between the common prefix
and suffix of the two versions, as it was before. From the document as it is now, the
journal walks back one verified step at a time (each step's result must hash to the
``from`` sha256 the entry names) until it reaches the version a record started from.

Where: ``$XDG_STATE_HOME/noma-workbench/undo/<key>.jsonl``, the key being the sha256 of
the document's resolved path (its identity on this machine); never inside the workspace,
so a folder cannot bring or read one. Private (0700 dir, 0600 file, no symlinks
followed), bounded (`MAX_ENTRIES` steps, `MAX_BYTES` of text; the oldest go first).

Untrusted on read all the same: a malformed line is skipped, and nothing read from it is
used unless the text it rebuilds hashes to what the transcript record says. The journal
also says which of this app's records are reverts and redos (by op_id), so undo never
has to guess that from a record's free-text reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.user_dirs import state_home

MAX_ENTRIES = 256
MAX_BYTES = 8 * 1024 * 1024  # spliced text kept per document
MAX_LINE = MAX_BYTES + 4096
KINDS = ("edit", "revert", "redo")
HEX = frozenset("0123456789abcdef")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Step:
    """Going back from version ``to`` to version ``frm``: ``frm`` is ``to`` with its UTF-8
    bytes ``[head : len - tail]`` replaced by ``text`` (offsets in bytes, on character
    boundaries)."""

    frm: str
    to: str
    head: int
    tail: int
    text: str
    op_id: str = ""
    kind: str = ""

    def back(self, current: str) -> str | None:
        """The earlier version, or None if ``current`` cannot be it (verified by hash)."""
        data = current.encode("utf-8")
        if self.head + self.tail > len(data):
            return None
        spliced = data[: self.head] + self.text.encode("utf-8") + data[len(data) - self.tail :]
        if hashlib.sha256(spliced).hexdigest() != self.frm:
            return None
        return spliced.decode("utf-8")

    def line(self) -> str:
        return json.dumps(
            {"from": self.frm, "to": self.to, "head": self.head, "tail": self.tail,
             "text": self.text, "op_id": self.op_id, "kind": self.kind},
            ensure_ascii=False,
        )  # fmt: skip


def _common(limit: int, same: Callable[[int], bool]) -> int:
    """The largest ``n <= limit`` with ``same(n)`` (monotone): a binary search over bytes
    comparisons (memcmp), so a 2 MB document costs ~20 passes over its bytes in C, not a
    Python loop over its characters."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _inside(data: bytes, at: int) -> bool:
    """True when byte ``at`` continues a UTF-8 character (a split there would cut it)."""
    return at < len(data) and (data[at] & 0xC0) == 0x80


def step_between(before: str, after: str, *, op_id: str = "", kind: str = "") -> Step:
    """The reverse splice from ``after`` back to ``before``."""
    old, new = before.encode("utf-8"), after.encode("utf-8")
    limit = min(len(old), len(new))
    head = _common(limit, lambda n: old[:n] == new[:n])
    while head and (_inside(old, head) or _inside(new, head)):
        head -= 1  # the split falls between characters in both versions
    tail = _common(limit - head, lambda n: old[len(old) - n :] == new[len(new) - n :])
    while tail and _inside(old, len(old) - tail):
        tail -= 1
    return Step(
        sha256_text(before),
        sha256_text(after),
        head,
        tail,
        old[head : len(old) - tail].decode("utf-8"),
        op_id,
        kind,
    )


def _is_sha(value: object) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


def _parse(line: str) -> Step | None:
    """One journal line, or None when it is not exactly what this module writes."""
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    frm, to, head, tail, text = (raw.get(k) for k in ("from", "to", "head", "tail", "text"))
    op_id, kind = raw.get("op_id", ""), raw.get("kind", "")
    if not (_is_sha(frm) and _is_sha(to) and isinstance(text, str)):
        return None
    if not (type(head) is int and type(tail) is int and head >= 0 and tail >= 0):
        return None
    if not isinstance(op_id, str) or len(op_id) > 200 or kind not in ("", *KINDS):
        return None
    return Step(str(frm), str(to), head, tail, text, op_id, str(kind))


class UndoJournal:
    """The journal of one document."""

    def __init__(self, document: Path, root: Path | None = None) -> None:
        key = hashlib.sha256(str(document.resolve()).encode("utf-8")).hexdigest()
        self.dir = (root or state_home()) / "undo"
        self.path = self.dir / f"{key}.jsonl"

    def steps(self) -> list[Step]:
        """Every well-formed step, oldest first (a missing or unreadable journal: none)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return []
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as handle:
            out: list[Step] = []
            for line in handle:
                if len(line) > MAX_LINE:
                    continue
                step = _parse(line)
                if step is not None:
                    out.append(step)
            return out[-MAX_ENTRIES:]

    def add(self, step: Step) -> None:
        """Append ``step`` (an unchanged version is not a step), trimming to the bounds.
        Best effort: undo after a restart is a convenience, never a reason to fail an edit."""
        if step.frm == step.to:
            return
        with contextlib.suppress(OSError):
            steps = [s for s in self.steps() if (s.frm, s.to) != (step.frm, step.to)]
            steps.append(step)
            total = 0
            kept: list[Step] = []
            for s in reversed(steps[-MAX_ENTRIES:]):
                total += len(s.text)
                if total > MAX_BYTES and kept:
                    break
                kept.append(s)
            self._write([s.line() for s in reversed(kept)])

    def _write(self, lines: list[str]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
        os.replace(tmp, self.path)

    def kinds(self) -> dict[str, str]:
        """op_id -> "edit" / "revert" / "redo", for the records this app wrote."""
        return {s.op_id: s.kind for s in self.steps() if s.op_id and s.kind}

    def version(self, sha: str, current: str, limit: int = MAX_ENTRIES) -> str | None:
        """The text of version ``sha``, walked back from ``current`` (None if the chain
        of journaled steps does not reach it)."""
        by_to: dict[str, Step] = {}
        for step in self.steps():
            by_to[step.to] = step
        text = current
        digest = sha256_text(text)
        seen = {digest}
        for _ in range(limit):
            if digest == sha:
                return text
            found = by_to.get(digest)
            if found is None:
                return None
            earlier = found.back(text)
            if earlier is None or found.frm in seen:
                return None
            text, digest = earlier, found.frm
            seen.add(digest)
        return text if digest == sha else None
