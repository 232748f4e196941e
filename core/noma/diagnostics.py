"""The Diagnostic record (§4.3) and the summary derivation (§4.2).

One shape serves validator findings, parser recovery notes and patch-engine errors, so
every surface serialises them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["info", "warning", "error"]
Summary = Literal["ok", "warn", "error"]

SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


@dataclass(slots=True)
class Diagnostic:
    """A machine-readable finding; `code` is for branching, `message` is for people."""

    severity: Severity
    code: str
    message: str
    line: int | None = None
    column: int | None = None
    node_id: str | None = None
    phase: Literal["pre", "post"] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }
        if self.line is not None:
            out["pos"] = {"line": self.line, "column": self.column or 1}
        if self.node_id is not None:
            out["nodeId"] = self.node_id
        if self.phase is not None:
            out["phase"] = self.phase
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Diagnostic:
        pos = data.get("pos") or {}
        return cls(
            severity=data["severity"],
            code=data["code"],
            message=data.get("message", ""),
            line=pos.get("line"),
            column=pos.get("column"),
            node_id=data.get("nodeId"),
            phase=data.get("phase"),
        )


def summarize(diagnostics: list[Diagnostic]) -> Summary:
    """§4.2: the highest severity wins; `info` alone and an empty list are both "ok"."""
    worst = -1
    for d in diagnostics:
        rank = SEVERITY_RANK[d.severity]
        if rank > worst:
            worst = rank
            if worst == 2:
                break
    if worst == 2:
        return "error"
    if worst == 1:
        return "warn"
    return "ok"


def has_error(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)
