"""Replay (§5.5): rebuild a document from its base and the applied records of a transcript.

Rejected and noop records are audit-only and skipped, whatever their summary fields say
(another implementation's summaries may not derive from its diagnostics: a warning, not a
stop). The result must hash to the last
applied record's ``post_sha256``; each applied record's own hashes are checked on the way
so a divergence is reported at the record where it starts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .patch import PatchError, apply_ops_to_bytes
from .transcript import read_lines


class ReplayError(Exception):
    """The transcript cannot be replayed onto this base (with the line that stops it)."""


class UnreadableTranscript(ReplayError):
    """A line of the transcript is not a JSON record at all (not UTF-8, not JSON): the
    input is unusable, not a replay that failed."""


@dataclass(slots=True)
class ReplayResult:
    data: bytes
    applied: int
    skipped: int
    final_sha256: str
    expected_sha256: str | None
    warnings: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return self.expected_sha256 is None or self.final_sha256 == self.expected_sha256


def replay(transcript: Path, base: bytes) -> ReplayResult:
    records = []
    warnings: list[str] = []
    for line in read_lines(transcript):
        if line.problem:
            kind = UnreadableTranscript if line.record is None else ReplayError
            raise kind(f"{transcript}:{line.number}: {line.problem}")
        warnings += [f"line {line.number}: {w}" for w in line.warnings]
        records.append((line.number, line.record))
    data = base
    applied = skipped = 0
    expected: str | None = None
    current = hashlib.sha256(data).hexdigest()
    drifted = False
    for number, record in records:
        assert record is not None
        if record["patch_result"] != "applied":
            skipped += 1
            continue
        if applied == 0 and record["pre_sha256"] != current:
            raise ReplayError(
                f"{transcript}:{number}: the base file's sha256 {current[:12]}… is not the "
                f"first applied record's pre_sha256 {record['pre_sha256'][:12]}…"
            )
        if applied and record["pre_sha256"] != current and not drifted:
            drifted = True
            warnings.append(
                f"line {number}: pre_sha256 differs from the state after the previous "
                "applied record (records written per op list, or an edit outside the log)"
            )
        try:
            data = apply_ops_to_bytes(data, [record["op"]])
        except PatchError as exc:
            raise ReplayError(
                f"{transcript}:{number}: the recorded op no longer applies ({exc.code}: {exc})"
            ) from exc
        current = hashlib.sha256(data).hexdigest()
        expected = record["post_sha256"]
        applied += 1
    return ReplayResult(data, applied, skipped, current, expected, warnings)
