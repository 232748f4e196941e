"""Single-block checks: each looks at one directive's attributes and body, nothing else.

Agent tasks, state changes, diagrams, plotly, figures and the escape hatches (§4.4).
"""

from __future__ import annotations

import json

from ..attrs import attr_problem
from ..diagnostics import Diagnostic
from ..ids import id_nodes_of
from ..nodes import Directive
from ..scan_facts import is_noverify
from .registry import diag
from .rules import rule
from .scan import Scan, body_text, has_value

ESCAPE_HATCHES = ("html", "svg", "script")


def _has_body(d: Directive) -> bool:
    """Child blocks or any non-blank body text (a body of only blank lines is empty)."""
    return bool(d.children) or bool(d.body.strip())


@rule(scope="block", codes=("agent-task-without-scope",), kinds=("agent_task", "todo"))
def check_agent_tasks(scan: Scan, out: list[Diagnostic]) -> None:
    """An agent needs to know what to work on: a ``scope=`` or a body saying it."""
    for d in scan.checked("agent_task", "todo"):
        if not has_value(d, "scope") and not _has_body(d):
            out.append(
                diag(
                    "agent-task-without-scope",
                    f"::{d.name} has neither a scope= attribute nor a body saying what to do.",
                    d,
                )
            )


@rule(
    scope="block",
    codes=("state-change-missing-block", "state-change-missing-from-to"),
    kinds=("state_change",),
)
def check_state_changes(scan: Scan, out: list[Diagnostic]) -> None:
    """A state change must say which block changed and between which states."""
    for d in scan.checked("state_change"):
        if not has_value(d, "block"):
            out.append(
                diag(
                    "state-change-missing-block",
                    "::state_change has no block= attribute naming the block that changed.",
                    d,
                )
            )
        missing = [key for key in ("from", "to") if not has_value(d, key)]
        if missing:
            out.append(
                diag(
                    "state-change-missing-from-to",
                    f"::state_change is missing {' and '.join(k + '=' for k in missing)}.",
                    d,
                )
            )


@rule(
    scope="block",
    codes=("diagram-missing-kind", "diagram-missing-source"),
    kinds=("diagram",),
)
def check_diagrams(scan: Scan, out: list[Diagnostic]) -> None:
    """A diagram needs its renderer (``kind=``) and its source (the body)."""
    for d in scan.checked("diagram"):
        if not has_value(d, "kind"):
            out.append(
                diag(
                    "diagram-missing-kind",
                    "::diagram has no kind= attribute (mermaid, graphviz or drawio expected).",
                    d,
                )
            )
        if not _has_body(d):
            out.append(diag("diagram-missing-source", "::diagram has no source body.", d))


def _reject_constant(name: str) -> object:
    """Python's json accepts NaN/Infinity; JSON (and Plotly.js) do not."""
    raise ValueError(f"{name} is not valid JSON")


@rule(scope="document", codes=("plotly-missing-spec", "plotly-invalid-json"), body_of=("plotly",))
def check_plotly(scan: Scan, out: list[Diagnostic]) -> None:
    """A plotly block is its JSON spec: absent is a warning, unparseable an error."""
    for d in scan.checked("plotly"):
        text = body_text(d)
        if not text.strip():
            out.append(diag("plotly-missing-spec", "::plotly has no JSON spec body.", d))
            continue
        try:
            json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            out.append(diag("plotly-invalid-json", f"::plotly body is not valid JSON: {exc}.", d))


@rule(scope="block", codes=("figure-missing-alt",), kinds=("figure",))
def check_figures(scan: Scan, out: list[Diagnostic]) -> None:
    """A figure needs a text alternative; a caption serves as one."""
    for d in scan.checked("figure"):
        if not has_value(d, "alt") and not has_value(d, "caption"):
            out.append(
                diag(
                    "figure-missing-alt",
                    "::figure has neither alt= nor caption=; screen readers have nothing to say.",
                    d,
                )
            )


@rule(scope="block", codes=("escape-hatch-untrusted",), kinds=ESCAPE_HATCHES)
def check_escape_hatches(scan: Scan, out: list[Diagnostic]) -> None:
    """Only a boolean true trusts (``trusted=false`` and ``trusted="yes"`` do not)."""
    for d in scan.checked(*ESCAPE_HATCHES):
        if d.attrs.get("trusted") is not True:
            out.append(
                diag(
                    "escape-hatch-untrusted",
                    f"::{d.name} is an escape hatch without the trusted flag; add trusted "
                    "to acknowledge it (or noverify to silence every check on it).",
                    d,
                )
            )


@rule(scope="document", codes=("malformed-attribute",), reads=("attr-problems", "noverify"))
def check_attribute_syntax(scan: Scan, out: list[Diagnostic]) -> None:
    """``malformed-attribute`` (additive code): the parser had to skip text in a block's
    ``{...}`` group, so what the author wrote and what every tool reads differ."""
    doc = scan.doc
    if not doc.attr_problems:
        return
    owners = {n.line: n for n in id_nodes_of(doc)}
    for line, group in doc.attr_problems:
        why = attr_problem(group) or "the attribute list does not parse cleanly"
        node = owners.get(line)
        if node is not None and isinstance(node, Directive) and is_noverify(node.attrs):
            continue
        out.append(
            diag(
                "malformed-attribute",
                f"The attribute group on this line is malformed: {why}.",
                node,
                line=line,
            )
        )
