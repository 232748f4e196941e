"""Computed-interaction checks on ``::computed_metric`` / ``::computed_plot`` (§4.4).

``computed-missing-formula``, ``formula-parse-error``, ``computed-unknown-dependency`` and
``computed-chain-too-deep``. A formula comes from ``formula=`` or, failing that, a
``formula:`` line of the body. Identifiers resolve (ids or aliases) to a ``::control``, a
computed block, or, for a ``::computed_plot``, its declared domain variable.

Chain depth counts computed blocks: one that reads only controls is depth 1, one that
reads a depth-1 block is depth 2, and so on. Following noma-interop ("fires on the block
at depth 3 only") the warning goes on the block where the chain first exceeds two levels,
not again on every block stacked above it; every block of a cycle is warned (each one
"participates in a computed cycle").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..nodes import Directive
from ..scan_facts import is_noverify
from .formula import FormulaError, parse_formula
from .registry import diag
from .rules import rule
from .scan import Scan

FORMULA_BLOCKS = ("computed_metric", "computed_plot")
# What an identifier may name (besides a plot's domain variable).
COMPUTED_BLOCKS = frozenset({"computed_metric", "computed_plot", "computed_table"})
DEPENDENCY_TARGETS = COMPUTED_BLOCKS | {"control"}
MAX_DEPTH = 2

_DOMAIN_VAR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?::|\Z)")


def body_value(body: str, key: str) -> str | None:
    """The value of the first ``key:`` line of a body (quotes around it removed)."""
    prefix = key + ":"
    if prefix not in body:
        return None
    for line in body.split("\n"):
        text = line.strip()
        if text.startswith(prefix):
            value = text[len(prefix) :].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            return value
    return None


def formula_of(d: Directive) -> str | None:
    """``formula=`` (as written, never coerced: ``formula="42"`` is text) or the body line."""
    raw = d.raw_attrs.get("formula")
    if raw is not None and raw.strip():
        return raw.strip()
    value = body_value(d.body, "formula")
    return value if value else None


def domain_variable(d: Directive) -> str | None:
    """A plot's domain variable from ``domain=``/``range=`` or a ``domain:``/``range:`` line
    (``var: start..end[:step]``)."""
    for key in ("domain", "range"):
        raw = d.raw_attrs.get(key)
        if raw is None:
            raw = body_value(d.body, key)
        if raw:
            m = _DOMAIN_VAR.match(raw)
            if m is not None:
                return m.group(1)
    return None


@dataclass(slots=True)
class _Graph:
    """Computed block -> the computed blocks its formula reads (by node identity)."""

    edges: dict[int, list[Directive]] = field(default_factory=dict)
    nodes: list[Directive] = field(default_factory=list)


@rule(
    scope="cross-block",
    codes=(
        "computed-missing-formula",
        "formula-parse-error",
        "computed-unknown-dependency",
        "computed-chain-too-deep",
    ),
    reads=("names", "noverify"),
    body_of=tuple(sorted(DEPENDENCY_TARGETS)),
    lines_in_message=("computed-chain-too-deep",),
)
def check_computed(scan: Scan, out: list[Diagnostic]) -> None:
    """Parse every formula once, report per block, then look at the dependency graph.

    Blocks under ``noverify`` are not reported but stay in the graph: another block's
    chain or cycle through them is still real.
    """
    blocks = scan.named(*FORMULA_BLOCKS)
    if not blocks:
        return
    idx = scan.index
    graph = _Graph()
    for d in blocks:
        quiet = is_noverify(d.attrs)
        formula = formula_of(d)
        if formula is None:
            if not quiet:
                out.append(
                    diag(
                        "computed-missing-formula",
                        f"::{d.name} has no formula= attribute or formula: body line.",
                        d,
                    )
                )
            continue
        try:
            identifiers = parse_formula(formula)
        except FormulaError as exc:
            if not quiet:
                out.append(
                    diag("formula-parse-error", f'Formula "{formula}" is invalid: {exc}.', d)
                )
            continue
        local = domain_variable(d) if d.name == "computed_plot" else None
        deps: list[Directive] = []
        for ident in identifiers:
            if ident == local:
                continue
            canonical = idx.resolve(ident)
            target = idx.first.get(canonical) if canonical is not None else None
            if isinstance(target, Directive) and target.name in DEPENDENCY_TARGETS:
                if target.name in COMPUTED_BLOCKS:
                    deps.append(target)
                continue
            if not quiet:
                what = "a plot-domain variable, " if d.name == "computed_plot" else ""
                out.append(
                    diag(
                        "computed-unknown-dependency",
                        f'Formula "{formula}" reads "{ident}", which is not {what}a ::control '
                        "or a computed block.",
                        d,
                    )
                )
        graph.nodes.append(d)
        graph.edges[id(d)] = deps
    _check_depth(graph, out)


def _check_depth(graph: _Graph, out: list[Diagnostic]) -> None:
    """Tarjan's SCCs (iterative), then depths over the acyclic rest, dependencies first."""
    edges = graph.edges
    order: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[Directive] = []
    components: list[list[Directive]] = []  # dependencies before dependents
    counter = 0
    for root in graph.nodes:
        if id(root) in order:
            continue
        work: list[tuple[Directive, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            key = id(node)
            if i == 0:
                order[key] = low[key] = counter
                counter += 1
                stack.append(node)
                on_stack.add(key)
            deps = edges.get(key, [])
            recurse = False
            while i < len(deps):
                dep = deps[i]
                dkey = id(dep)
                i += 1
                if dkey not in order:
                    work.append((node, i))
                    work.append((dep, 0))
                    recurse = True
                    break
                if dkey in on_stack:
                    low[key] = min(low[key], order[dkey])
            if recurse:
                continue
            if low[key] == order[key]:
                component: list[Directive] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(id(member))
                    component.append(member)
                    if member is node:
                        break
                components.append(component)
            if work:
                parent = id(work[-1][0])
                low[parent] = min(low[parent], low[key])

    depth: dict[int, int] = {}
    for component in components:
        node = component[0]
        cyclic = len(component) > 1 or any(dep is node for dep in edges.get(id(node), []))
        if cyclic:
            for member in component:
                depth[id(member)] = 0  # a cycle is reported as such, not as depth
                if not is_noverify(member.attrs):
                    names = " -> ".join(
                        f'"{m.id}"' if m.id else f"line {m.line}" for m in reversed(component)
                    )
                    out.append(
                        diag(
                            "computed-chain-too-deep",
                            f"::{member.name} participates in a computed cycle ({names}).",
                            member,
                        )
                    )
            continue
        level = 1 + max((depth.get(id(dep), 1) for dep in edges.get(id(node), [])), default=0)
        depth[id(node)] = level
        if level == MAX_DEPTH + 1 and not is_noverify(node.attrs):
            out.append(
                diag(
                    "computed-chain-too-deep",
                    f"::{node.name} sits on a chain of {level} computed blocks "
                    f"(at most {MAX_DEPTH} are allowed).",
                    node,
                )
            )
