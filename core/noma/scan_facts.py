"""What the validator's walk learns from a block, noted by the parser as it reads the block.

The validator's walk (`core.noma.validate.scan`) buckets directives by name, keeps those a
reference rule reads, and collects the inline text that holds ``[[`` with its line and
owning block, outside ``noverify`` blocks and raw bodies. Every one of those facts is known
the moment the parser makes the node: it has the directive's name and attributes, the
text, and the open containers that say whose content it is. Noting them then costs a few
operations in compiled code on a node that is in cache; walking a fresh 5,000-section tree
for them afterwards cost a tenth of a cold parse and validation (and more at 50k, where
the tree no longer fits the cache). So the parser leaves a `ScanFacts` on the document it
made, and the walk takes it instead of walking.

The rules of scope live here, once, for both: the walk (`scan_nodes`, which still reads
trees the parser did not make whole, such as a splice's re-parsed run) and the parser.
A test holds the parser's facts equal to the walk's on every corpus document.
"""

from __future__ import annotations

from dataclasses import dataclass

from .attrs import Attrs
from .memo import Memo
from .nodes import Directive, Document, Node

# Directives whose body is data or code (YAML, JSON, CSV, markup, diagram source, formulas),
# not prose. A ``[[`` there is content, never a wikilink: ``rows: [[1, 2]]`` in a dataset is
# a row array. This is the directive-level counterpart of "never in code".
RAW_BODY_DIRECTIVES = frozenset(
    {
        "code",
        "code_cell",
        "output",
        "query",
        "dataset",
        "plot",
        "plotly",
        "diagram",
        "math",
        "html",
        "svg",
        "script",
        "control",
        "computed_metric",
        "computed_plot",
        "computed_table",
    }
)

_OFF = (False, 0, "no", "off", "false")

# Reference attributes on any directive (spec §4.4, the positions rename_id retargets).
REFERENCE_ATTRS = ("for", "parent", "dataset")
# ... and on the review/notes directives only (interop "Validator").
TARGET_ATTRS = ("target", "block", "ref")
TARGET_DIRECTIVES = frozenset({"comment", "footnote", "endnote", "change_request", "state_change"})
REFERENCE_KEYS = frozenset(REFERENCE_ATTRS)
TARGET_KEYS = frozenset(REFERENCE_ATTRS + TARGET_ATTRS)


def is_noverify(attrs: Attrs) -> bool:
    """``noverify`` is a flag; ``noverify=false`` (or ``no``/``off``/``0``) turns it off."""
    value = attrs.get("noverify")
    return value is not None and value not in _OFF


@dataclass(slots=True)
class ScanFacts:
    """The walk's facts about a whole parsed document, as the parser noted them.

    ``site_owners`` holds the block whose id owns each text site (a section, or a
    directive that has an id), not the id: section ids are assigned after the parse. A
    section that ends up with no id hands its sites to the block around it, which the
    walk knows and these facts do not; `owner_ids` says None then, and the walk runs.
    """

    directives: list[Directive]
    by_name: dict[str, list[Directive]]
    checked_by_name: dict[str, list[Directive]]  # without the blocks that carry noverify
    ref_blocks: list[Directive]  # checked directives with a reference attribute
    site_texts: list[str]
    site_lines: list[int]
    site_owners: list[Node | None]

    def owner_ids(self) -> list[str | None] | None:
        """The owning id of each site; None when some owner is a section with no id."""
        out: list[str | None] = []
        for node in self.site_owners:
            if node is None:
                out.append(None)
                continue
            ident = node.id
            if ident is None:
                return None
            out.append(ident)
        return out


# The facts a parse left on its document, until the walk takes them (only here).
_FACTS: Memo[ScanFacts] = Memo("parser scan facts")


def keep_facts(doc: Document, facts: ScanFacts) -> None:
    """Leave ``facts`` on the document the parser made (the whole of it)."""
    _FACTS.put(doc, facts)


def take_facts(doc: Document) -> ScanFacts | None:
    """The facts the parser left on ``doc``, removed from it (the walk's `Scan` holds what
    it needs from then on); None for a tree no whole parse made."""
    facts = _FACTS.get(doc)
    if facts is not None:
        _FACTS.clear(doc)
    return facts
