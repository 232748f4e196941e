"""Which ops apply to which block: one rule for the CLI (``noma ops``), MCP
(``describe_capabilities`` with ``id``) and the app.

An op applies to a block when the block may be named in the op's target field (its
`ops_catalog` record's ``target``: ``id``, ``from``, ``parent`` or ``target``) and the
engine would accept it there for what the block is (the record's `Fits` rule):
directive-only ops need a directive, table and dataset ops need a ``::table`` /
``::dataset``, ``update_heading`` a heading section, ``add_block`` a block that takes
children. A block without a canonical id, or with a duplicated one, takes no op (§2.1).
"""

from __future__ import annotations

from ..ids import index
from ..nodes import Directive, Document, Node, Section
from .ops_catalog import CATALOG, Fits


def applicable_ops(doc: Document, node: Node) -> list[str]:
    """The op names that can address ``node``, in catalog order."""
    if not node.id:
        return []
    if index(doc).count.get(node.id, 1) > 1:
        return []  # ambiguous: fix the duplicate-id first
    return ops_for_kind(node)


def ops_for_kind(node: Node) -> list[str]:
    """The ops that fit what ``node`` is, whether or not it can be addressed now (the app
    shows those as blocked, with the reason, rather than hiding them)."""
    return [name for name, record in CATALOG.items() if fits(record.fits, node)]


def fits(rule: Fits, node: Node) -> bool:
    """Whether a block like ``node`` is one an op with this `Fits` rule may address."""
    if rule is Fits.ANY:
        return True
    if isinstance(node, Section):
        return rule is Fits.HEADING or (rule is Fits.CONTAINER and not node.in_directive)
    if not isinstance(node, Directive):
        return False
    if rule is Fits.DIRECTIVE or rule is Fits.CONTAINER:
        return True
    if rule is Fits.ATTRIBUTED:
        return any(key != "id" for key in node.attrs)
    if rule is Fits.OPEN_COMMENT:
        return node.name == "comment" and node.attrs.get("status") != "resolved"
    if rule is Fits.TABLE:
        return node.name == "table"
    if rule is Fits.DATASET:
        return node.name == "dataset"
    return False
