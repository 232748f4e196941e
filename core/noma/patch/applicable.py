"""Which ops apply to which block: one rule for the CLI (``noma ops``), MCP
(``describe_capabilities`` with ``id``) and the app.

An op applies to a block when the block may be named in the op's target field
(`catalog.TARGET_FIELD`: ``id``, ``from``, ``parent`` or ``target``) and the engine would
accept it there for what the block is: directive-only ops need a directive, table and
dataset ops need a ``::table`` / ``::dataset``, ``update_heading`` a heading section,
``add_block`` a block that takes children. A block without a canonical id, or with a
duplicated one, takes no op (§2.1).
"""

from __future__ import annotations

from ..ids import index
from ..nodes import Directive, Document, Node, Section
from .catalog import ALL_OPS

# Ops whose target may be any block with an id (notes and change requests attach to it).
ANY_BLOCK = frozenset({"add_comment", "add_footnote", "add_endnote", "add_change_request"})
DIRECTIVE = frozenset(
    {
        "replace_block",
        "delete_block",
        "update_attribute",
        "rename_id",
        "replace_body",
        "move_block",
        "add_block",
    }
)


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
    fits: set[str] = set(ANY_BLOCK)
    if isinstance(node, Section):
        fits.add("update_heading")
        if not node.in_directive:
            fits.add("add_block")
    elif isinstance(node, Directive):
        fits |= DIRECTIVE
        if any(key != "id" for key in node.attrs):
            fits.add("remove_attribute")
        if node.name == "comment" and node.attrs.get("status") != "resolved":
            fits.add("resolve_comment")
        if node.name == "table":
            fits |= {name for name in ALL_OPS if "_table_" in name}
        if node.name == "dataset":
            fits |= {name for name in ALL_OPS if "_dataset_" in name}
    return [name for name in ALL_OPS if name in fits]
