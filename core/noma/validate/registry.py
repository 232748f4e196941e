"""Every §4.4 rule code with its severity, in one table.

Rules never spell a severity themselves: they ask `diag` for a code, so a code and its
severity cannot drift apart between modules, and `RULE_CODES` (what ``ignore_rules`` is
checked against) is derived from the same table.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity
from ..nodes import Node

SEVERITIES: dict[str, Severity] = {
    # Document integrity
    "duplicate-id": "error",
    "broken-reference": "error",
    # Profile conformance
    "unknown-profile": "warning",
    "out-of-profile-directive": "warning",
    # Research-profile semantic checks
    "claim-without-evidence": "warning",
    "evidence-missing-for": "warning",
    "risk-without-owner": "warning",
    "decision-without-status": "warning",
    # Agent-task checks
    "agent-task-without-scope": "warning",
    # Computed-interaction checks
    "control-missing-default": "warning",
    "control-out-of-range-default": "warning",
    "control-invalid-lock": "warning",
    "computed-missing-formula": "warning",
    "formula-parse-error": "error",
    "computed-unknown-dependency": "error",
    "computed-chain-too-deep": "warning",
    # State-change checks
    "state-change-missing-block": "warning",
    "state-change-missing-from-to": "warning",
    # Citation checks
    "stale-citation": "warning",
    # Diagram checks
    "diagram-missing-kind": "warning",
    "diagram-missing-source": "warning",
    # Plot checks
    "plot-missing-data": "error",
    "plot-unknown-dataset": "error",
    "plot-unknown-column": "error",
    "plot-mixed-delimiters": "warning",
    # Plotly checks
    "plotly-missing-spec": "warning",
    "plotly-invalid-json": "error",
    # Figure checks
    "figure-missing-alt": "warning",
    # Dataset checks
    "dataset-src-missing": "warning",
    # Additive: a body beyond the bounds on structured data (core.noma.bounded).
    "dataset-body-unreadable": "error",
    # Escape-hatch checks
    "escape-hatch-untrusted": "warning",
    # Meta-rule
    "unknown-ignore-rule": "info",
    # Additive (§4.4 allows new codes in a minor version): an attribute group the reader had
    # to skip text in (an unclosed quote, stray text, a repeated key).
    "malformed-attribute": "warning",
    # Additive, as the reference applies them beyond §4.4 (it accepts them as --ignore-rule
    # names), so a document gives the same diagnostics under both tools.
    "citation-missing-source": "warning",
    "claim-invalid-confidence": "warning",
    "claim-missing-confidence": "warning",
    "change-request-invalid-action": "warning",
    "change-request-missing-revision-text": "warning",
    "adr-missing-owner": "warning",
    "adr-missing-date": "warning",
    "adr-missing-decision": "warning",
    "memory-missing-id": "error",
    "memory-missing-type": "error",
    "memory-invalid-type": "error",
    "memory-invalid-confidence": "error",
    "memory-invalid-last-seen": "error",
    "memory-wikilink-non-memory-target": "warning",
}

# The codes above that are not in the §4.4 table.
ADDITIVE_CODES: frozenset[str] = frozenset(
    {
        "malformed-attribute",
        "dataset-body-unreadable",
        "citation-missing-source",
        "claim-invalid-confidence",
        "claim-missing-confidence",
        "change-request-invalid-action",
        "change-request-missing-revision-text",
        "adr-missing-owner",
        "adr-missing-date",
        "adr-missing-decision",
        "memory-missing-id",
        "memory-missing-type",
        "memory-invalid-type",
        "memory-invalid-confidence",
        "memory-invalid-last-seen",
        "memory-wikilink-non-memory-target",
    }
)

RULE_CODES: frozenset[str] = frozenset(SEVERITIES)


def diag(
    code: str,
    message: str,
    node: Node | None = None,
    *,
    line: int | None = None,
    node_id: str | None = None,
) -> Diagnostic:
    """A diagnostic for ``code`` at its registered severity.

    Positioned on ``node`` (its opening line, column 1, its id) unless ``line`` /
    ``node_id`` say otherwise; with neither, the diagnostic is file-level (no ``pos``).
    """
    if node is not None:
        if line is None:
            line = node.line
        if node_id is None:
            node_id = node.id
    return Diagnostic(
        SEVERITIES[code], code, message, line, 1 if line is not None else None, node_id
    )
