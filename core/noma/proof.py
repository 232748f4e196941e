"""A proof: what an op list would do, shown before anything is written.

The diff of the touched lines and the diagnostics that would appear or disappear. Used by
``noma proof`` and by the workbench's preview before every edit.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic
from .patch.pipeline import DocumentCache, PatchOutcome, PatchRequest, patch_file
from .patch.text import LineChange
from .text_ends import common_ends, lf_lines, line_cut


@dataclass(slots=True)
class Proof:
    outcome: PatchOutcome
    diff: list[str] = field(default_factory=list)
    appeared: list[Diagnostic] = field(default_factory=list)
    disappeared: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "ok": o.ok,
            "code": o.code,
            "error": o.error,
            "results": [r["patch_result"] for r in o.records],
            "pre_sha256": o.pre_sha256,
            "post_sha256": o.post_sha256,
            "pre_validation": o.pre_validation,
            "post_validation": o.post_validation,
            "diff": "".join(self.diff),
            "appeared": [d.to_json() for d in self.appeared],
            "disappeared": [d.to_json() for d in self.disappeared],
            "advisories": o.advisories,
        }

    def render(self) -> str:
        o = self.outcome
        lines: list[str] = []
        if not o.ok:
            lines.append(f"REJECTED  {o.code}: {o.error}")
            lines.append("Nothing would be written.")
            return "\n".join(lines) + "\n"
        results = ", ".join(r["patch_result"] for r in o.records)
        lines.append(f"ops: {results}")
        lines.append(f"sha256: {o.pre_sha256[:8]} -> {o.post_sha256[:8]}")
        lines.append(f"validation: {o.pre_validation} -> {o.post_validation}")
        lines.append("")
        if self.diff:
            lines.extend(line.rstrip("\n") for line in self.diff)
        else:
            lines.append("(no change: the op list is a noop)")
        for title, items in (("appears", self.appeared), ("disappears", self.disappeared)):
            if items:
                lines.append("")
                lines.append(f"diagnostics that {title}:")
                lines.extend(f"  {d.severity:<7} {d.code}  {d.message}" for d in items)
        for note in o.advisories:
            lines.append(f"note: {note}")
        return "\n".join(lines) + "\n"


_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def touched_diff(
    before: str, after: str, name: str, context: int = 2, change: LineChange | None = None
) -> list[str]:
    """A unified diff of just the touched region, numbered as the parser numbers lines.

    Patches touch a few lines of possibly 100k; difflib over the whole file costs seconds,
    and even splitting both texts into lines cost ~15 ms per proof at 5,000 sections. So
    the shared head and tail are cut first and only the rest is split: from the lines the
    ops left alone (``change``, when the engine knows it) or else on the characters
    (`text_ends.line_cut`, ~15 ms at 20,000 sections); the hunk headers are shifted back to
    the file's line numbers. The result is the diff of the whole texts' lines with their
    common head and tail cut to ``context`` lines (`_whole_diff`); where the cut cannot
    prove that (one side's cut lines all shared, so the whole-text head could run past
    it), the whole texts are split.
    """
    if before == after:
        return []
    cut = _cut_at(change, context) if change is not None else None
    if cut is not None:
        head_lines, old, new, after_lines = cut
        old_short = new_short = after_lines > 0  # lines after the cut, the same count
    else:
        start, head_lines, old_end, new_end = line_cut(before, after, context)
        old = lf_lines(before[start:old_end])
        new = lf_lines(after[start:new_end])
        old_short, new_short = old_end < len(before), new_end < len(after)
        after_lines = _line_count(before, old_end)
    head, tail = common_ends(old, new)
    if (head == len(old) and old_short) or (head == len(new) and new_short):
        return _whole_diff(before, after, name, context)
    # What the whole-text cut would keep, in this cut's lines: its head is head_lines +
    # head, its tail the lines after the cut plus tail (the proofs are in the tests).
    first = max(0, head_lines + head - context) - head_lines
    old_stop = len(old) + after_lines - max(0, after_lines + tail - context)
    new_stop = len(new) + after_lines - max(0, after_lines + tail - context)
    if first < 0 or old_stop > len(old) or new_stop > len(new):
        return _whole_diff(before, after, name, context)
    return _diff(old[first:old_stop], new[first:new_stop], head_lines + first, name, context)


def _cut_at(change: LineChange, context: int) -> tuple[int, list[str], list[str], int] | None:
    """The cut `text_ends.line_cut` would find, read from the lines the ops left alone:
    ``(lines before the cut, old cut lines, new cut lines, lines after the cut)``, each
    cut line with its ``\\n`` as `lf_lines` gives it. None where the two versions' lines
    are not their texts' lines one for one (a BOM, a final newline added or lost)."""
    old, new = change.before, change.after
    if old.bom or new.bom or old.final_newline != new.final_newline:
        return None
    n_old, n_new = len(old.lines), len(new.lines)
    start = max(0, change.head - context)
    after_lines = max(0, change.tail - context)
    return (
        start,
        _lf(old.lines, start, n_old - after_lines, old.final_newline),
        _lf(new.lines, start, n_new - after_lines, new.final_newline),
        after_lines,
    )


def _lf(lines: list[str], start: int, stop: int, final_newline: bool) -> list[str]:
    """``lines[start:stop]`` each with its ``\\n``; the file's last line has none when the
    file does not end with one."""
    out = [line + "\n" for line in lines[start:stop]]
    if out and stop == len(lines) and not final_newline:
        out[-1] = out[-1][:-1]
    return out


def _line_count(text: str, start: int) -> int:
    """The number of lines in ``text[start:]`` (``start`` a line start)."""
    if start >= len(text):
        return 0
    return text.count("\n", start) + (0 if text.endswith("\n") else 1)


def _whole_diff(before: str, after: str, name: str, context: int) -> list[str]:
    """`touched_diff` the long way: both texts split, common head and tail cut by lines."""
    old, new = lf_lines(before), lf_lines(after)
    head, tail = common_ends(old, new)
    start = max(0, head - context)
    keep_tail = max(0, tail - context)
    old, new = old[start : len(old) - keep_tail], new[start : len(new) - keep_tail]
    return _diff(old, new, start, name, context)


def _diff(old: list[str], new: list[str], offset: int, name: str, context: int) -> list[str]:
    """difflib's unified diff of two cut line lists, hunks renumbered by ``offset``."""
    out = []
    for line in difflib.unified_diff(old, new, fromfile=f"a/{name}", tofile=f"b/{name}", n=context):
        m = _HUNK.match(line)
        if m is not None and offset:
            a, b = int(m.group(1)) + offset, int(m.group(3)) + offset
            line = f"@@ -{a}{m.group(2) or ''} +{b}{m.group(4) or ''} @@{line[m.end() :]}"
        out.append(line)
    return out


def _key(d: Diagnostic) -> tuple[str, str, str | None, str]:
    return (d.severity, d.code, d.node_id, d.message)


def build_proof(
    path: str | Path,
    request: PatchRequest,
    *,
    cache: DocumentCache | None = None,
    context: int = 2,
) -> Proof:
    """Run the request as a dry run and explain it. Nothing is written. The diff is
    against the very text the ops ran on (no second read that a concurrent writer could
    slip between)."""
    outcome = patch_file(path, request, write=False, record=False, cache=cache)
    proof = Proof(outcome)
    if not outcome.ok or outcome.new_text is None or outcome.pre_text is None:
        return proof
    name = Path(path).name
    proof.diff = touched_diff(
        outcome.pre_text, outcome.new_text, name, context, outcome.line_change
    )
    pre = Counter(_key(d) for d in outcome.pre_diagnostics if d.code != "base_sha_drift")
    post = Counter(_key(d) for d in outcome.post_diagnostics)
    for d in outcome.post_diagnostics:
        k = _key(d)
        if post[k] > pre.get(k, 0):
            proof.appeared.append(d)
            post[k] -= 1
    post = Counter(_key(d) for d in outcome.post_diagnostics)
    for d in outcome.pre_diagnostics:
        k = _key(d)
        if d.code != "base_sha_drift" and pre[k] > post.get(k, 0):
            proof.disappeared.append(d)
            pre[k] -= 1
    return proof
