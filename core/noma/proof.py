"""A proof: what an op list would do, shown before anything is written.

The diff of the touched lines and the diagnostics that would appear or disappear. Used by
``noma proof`` and by the workbench's preview before every edit.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic
from .patch.pipeline import DocumentCache, PatchOutcome, PatchRequest, patch_file


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


def _key(d: Diagnostic) -> tuple[str, str, str | None, str]:
    return (d.severity, d.code, d.node_id, d.message)


def build_proof(
    path: str | Path,
    request: PatchRequest,
    *,
    cache: DocumentCache | None = None,
    context: int = 2,
) -> Proof:
    """Run the request as a dry run and explain it. Nothing is written."""
    from .files import read_source

    before = read_source(path).text
    outcome = patch_file(path, request, write=False, record=False, cache=cache)
    proof = Proof(outcome)
    if not outcome.ok or outcome.new_text is None:
        return proof
    name = Path(path).name
    proof.diff = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            outcome.new_text.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
            n=context,
        )
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
