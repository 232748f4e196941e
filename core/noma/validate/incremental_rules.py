"""Whole-document rules on a spliced tree, without walking it (issue 14, item 3).

A splice (`core.noma.incremental`) replaces one run of sibling blocks, old lines
``r0+1..r1``, by a re-parsed run; every block after it moves by ``delta`` lines and is
otherwise the same. The whole-document rules (references, duplicate ids, backing
evidence, formulas, plots, profiles, ...) read, from any block, only what `run_facts`
collects: ids and aliases with the kind of block that carries them, each directive's
name, attributes and (for the kinds whose body a whole-document rule reads) its body, the
text sites that can hold a wikilink with their owners, and the untidy attribute groups.

So when the old run and the new run have equal facts, every whole-document finding is
the base version's: those before the run as they were, those after it moved by
``delta``. That holds only when no finding sat inside the old run (its lines inside the
run may have moved differently), none names a line in its message (``duplicate-id``
points at the first copy's line, a computed cycle may list lines), and the rules read no
other file (``::dataset src=``: the file may have changed since). Anything else takes the
full path: walk the new tree and run the rules (`validate.document_rules`). The property
test (`tests/noma/test_incremental_properties.py`) compares every spliced validation with
a full one.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..nodes import Directive, Document, Node, Section
from .computed import COMPUTED_BLOCKS, DEPENDENCY_TARGETS
from .scan import TARGET_KEYS, Scan

# Directive kinds whose body (or the one code block in it) a whole-document rule reads:
# formulas and domains (computed blocks, controls), data (datasets: columns for plots,
# the body for src checks), plot markup. Other bodies are only read by per-block rules.
BODY_FACTS = frozenset({"dataset", "plot", "plotly", *COMPUTED_BLOCKS, *DEPENDENCY_TARGETS})
# Directive kinds a whole-document rule reads any attribute of (controls, formulas,
# citations, plots and their datasets, decisions for the adr profile, memories).
ALL_ATTR_FACTS = BODY_FACTS | {"citation", "decision", "adr", "memory"}
# The attributes whole-document rules read on every other block: its id and aliases,
# ``noverify``, and the reference attributes (``broken-reference``; ``for=`` also backs a
# claim).
GENERIC_ATTR_FACTS = frozenset({"id", "aliases", "noverify", *TARGET_KEYS})
# Codes whose message names a line of another block: they cannot be moved by a delta.
LINE_IN_MESSAGE = frozenset({"duplicate-id", "computed-chain-too-deep"})


def run_facts(
    found: Scan, id_nodes: list[Node], problems: list[tuple[int, str]]
) -> tuple[Any, ...]:
    """Everything a whole-document rule can read from the blocks of one run, without
    lines (see the module docstring): equal facts, equal findings."""
    ids = [
        (
            n.id,
            tuple(n.aliases),
            n.name if isinstance(n, Directive) else None,
            _read_attrs(n.attrs) if isinstance(n, Section) else None,
        )
        for n in id_nodes
    ]
    directives = [
        (
            d.name,
            d.id,
            d.attrs if d.name in ALL_ATTR_FACTS else _read_attrs(d.attrs),
            d.raw_attrs if d.name in ALL_ATTR_FACTS else _read_attrs(d.raw_attrs),
            d.body if d.name in BODY_FACTS else None,
            len(d.children) if d.name in BODY_FACTS else None,
        )
        for d in found.directives
    ]
    return (
        ids,
        directives,
        found.site_texts,
        found.site_owners,
        [group for _line, group in problems],
        len(found.ref_blocks),
        {name: len(bucket) for name, bucket in found.checked_by_name.items()},
    )


def _read_attrs(attrs: dict[str, Any]) -> list[tuple[str, Any]]:
    """The attributes of a block that whole-document rules read (`GENERIC_ATTR_FACTS`)."""
    if not attrs:
        return []
    return [(k, v) for k, v in attrs.items() if k in GENERIC_ATTR_FACTS]


def splice_document_findings(doc: Document, key: Any) -> list[Diagnostic] | None:
    """The whole-document findings of a spliced ``doc`` taken from its base version's, or
    None when they must be computed afresh."""
    recipe = doc._document_recipe
    if recipe is None:
        return None
    base_key, base, reads_files, r0, r1, delta = recipe
    if base_key != key or reads_files:
        return None
    out: list[Diagnostic] = []
    for d in base:
        line = d.line
        if line is None or line <= r0:
            out.append(d)
        elif line <= r1 or (delta and d.code in LINE_IN_MESSAGE):
            return None
        elif not delta:
            out.append(d)
        else:
            out.append(
                Diagnostic(
                    d.severity, d.code, d.message, line + delta, d.column, d.node_id, d.phase
                )
            )
    return out
