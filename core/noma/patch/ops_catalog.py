"""One record per op of the v1.0 catalog (§3.1 core, §1.5 extended): every fact the
surfaces need about an op, in one table.

The registry finds an op's implementation by its ``family``; the engine, the pipeline and
capabilities find the block an op addresses by its ``target`` field; the structure guard
(`guard`) reads ``outline`` (what the op may do to the document's block outline); revert
reads ``inverse``; `applicable.applicable_ops` reads ``fits``; capability advisories read
``capability``. A new op is a model in `models` plus one `OpRecord` here: the catalog
tests refuse either without the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Literal

from .models import MODELS, Op

Family = Literal["blocks", "notes", "tables", "datasets"]
TargetField = Literal["id", "from", "parent", "target"]


class Outline(Enum):
    """What an applied op may change in the document's block outline (the guard's
    allowance)."""

    IN_PLACE = "in_place"  # edits inside one block: no outline entry changes
    ADDS = "adds"  # add_block: exactly the blocks of its content appear
    REVIEW = "review"  # one new review block (plus the blocks of its content)
    REPLACES = "replaces"  # the target's blocks become the content's
    REPLACES_BODY = "replaces_body"  # the target's inner blocks become the content's
    REMOVES = "removes"  # the target's blocks disappear
    MOVES = "moves"  # the same blocks, elsewhere
    RENAMES = "renames"  # the same outline with ``from`` renamed ``to``


class Fits(Enum):
    """Which blocks an op may address (`applicable.fits`)."""

    ANY = "any"  # any block with an id (notes and change requests attach to it)
    DIRECTIVE = "directive"
    CONTAINER = "container"  # a directive, or a heading section outside a directive
    HEADING = "heading"
    ATTRIBUTED = "attributed"  # a directive with an attribute besides id
    OPEN_COMMENT = "open_comment"  # a ::comment not yet resolved
    TABLE = "table"
    DATASET = "dataset"


class Inverse(Enum):
    """How revert undoes a recorded op (`core.noma.revert`)."""

    RESTORE_SOURCE = "restore_source"  # replace_block with the directive's previous source
    RETITLE = "retitle"  # update_heading with the old title
    DELETE_ADDED = "delete_added"  # delete_block of the block the op added
    ADD_BACK = "add_back"  # add_block of the deleted directive at its old place
    RENAME_BACK = "rename_back"
    MOVE_BACK = "move_back"


class Capability(Enum):
    """How an agent's grant is looked up in a capability sidecar (Annex A, advisory)."""

    TARGET = "target"  # a grant for the op on the target block's type
    NEW_BLOCK = "new_block"  # a grant on the type of the block the content opens
    RENAME = "rename"  # a grant, and nomaAgent.ids.rename: true
    ATTRIBUTE = "attribute"  # a grant, and the value within the key's attrs rule


@dataclass(frozen=True, slots=True)
class OpRecord:
    name: str
    family: Family
    target: TargetField
    outline: Outline
    fits: Fits
    inverse: Inverse
    capability: Capability = Capability.TARGET
    core: bool = False  # one of the five core ops every implementation supports (§3.1)

    @property
    def model(self) -> type[Op]:
        """The op's typed model: its wire shape (the same as ``patch-op.schema.json``)."""
        return MODELS[self.name]


_R, _O, _F, _I, _C = OpRecord, Outline, Fits, Inverse, Capability

_RECORDS = (
    # The five core ops (§3.1).
    _R("replace_block", "blocks", "id", _O.REPLACES, _F.DIRECTIVE, _I.RESTORE_SOURCE, core=True),
    _R("add_block", "blocks", "parent", _O.ADDS, _F.CONTAINER, _I.DELETE_ADDED, _C.NEW_BLOCK,
       core=True),
    _R("delete_block", "blocks", "id", _O.REMOVES, _F.DIRECTIVE, _I.ADD_BACK, core=True),
    _R("update_attribute", "blocks", "id", _O.IN_PLACE, _F.DIRECTIVE, _I.RESTORE_SOURCE,
       _C.ATTRIBUTE, core=True),
    _R("rename_id", "blocks", "from", _O.RENAMES, _F.DIRECTIVE, _I.RENAME_BACK, _C.RENAME,
       core=True),
    # The extended ops (§1.5 and after), in the models' order.
    _R("replace_body", "blocks", "id", _O.REPLACES_BODY, _F.DIRECTIVE, _I.RESTORE_SOURCE),
    _R("update_heading", "blocks", "id", _O.IN_PLACE, _F.HEADING, _I.RETITLE),
    _R("add_comment", "notes", "target", _O.REVIEW, _F.ANY, _I.DELETE_ADDED),
    _R("resolve_comment", "notes", "id", _O.IN_PLACE, _F.OPEN_COMMENT, _I.RESTORE_SOURCE),
    _R("remove_attribute", "blocks", "id", _O.IN_PLACE, _F.ATTRIBUTED, _I.RESTORE_SOURCE),
    _R("add_footnote", "notes", "target", _O.REVIEW, _F.ANY, _I.DELETE_ADDED),
    _R("add_endnote", "notes", "target", _O.REVIEW, _F.ANY, _I.DELETE_ADDED),
    _R("add_change_request", "notes", "target", _O.REVIEW, _F.ANY, _I.DELETE_ADDED),
    _R("update_table_cell", "tables", "id", _O.IN_PLACE, _F.TABLE, _I.RESTORE_SOURCE),
    _R("update_table_header_cell", "tables", "id", _O.IN_PLACE, _F.TABLE, _I.RESTORE_SOURCE),
    _R("insert_table_row", "tables", "id", _O.IN_PLACE, _F.TABLE, _I.RESTORE_SOURCE),
    _R("delete_table_row", "tables", "id", _O.IN_PLACE, _F.TABLE, _I.RESTORE_SOURCE),
    _R("insert_table_column", "tables", "id", _O.IN_PLACE, _F.TABLE, _I.RESTORE_SOURCE),
    _R("delete_table_column", "tables", "id", _O.IN_PLACE, _F.TABLE, _I.RESTORE_SOURCE),
    _R("update_dataset_cell", "datasets", "id", _O.IN_PLACE, _F.DATASET, _I.RESTORE_SOURCE),
    _R("insert_dataset_row", "datasets", "id", _O.IN_PLACE, _F.DATASET, _I.RESTORE_SOURCE),
    _R("delete_dataset_row", "datasets", "id", _O.IN_PLACE, _F.DATASET, _I.RESTORE_SOURCE),
    _R("insert_dataset_column", "datasets", "id", _O.IN_PLACE, _F.DATASET, _I.RESTORE_SOURCE),
    _R("delete_dataset_column", "datasets", "id", _O.IN_PLACE, _F.DATASET, _I.RESTORE_SOURCE),
    _R("move_block", "blocks", "id", _O.MOVES, _F.DIRECTIVE, _I.MOVE_BACK),
)  # fmt: skip

CATALOG: MappingProxyType[str, OpRecord] = MappingProxyType({r.name: r for r in _RECORDS})
"""Op name -> its record, in the models' (the wire schema's) order."""

ALL_OPS: tuple[str, ...] = tuple(CATALOG)
CORE_OPS: tuple[str, ...] = tuple(r.name for r in _RECORDS if r.core)
TARGET_FIELD: MappingProxyType[str, TargetField] = MappingProxyType(
    {r.name: r.target for r in _RECORDS}
)


def ops_where(**facts: object) -> frozenset[str]:
    """The names of the ops whose record has every given fact, e.g.
    ``ops_where(outline=Outline.IN_PLACE)``."""
    return frozenset(r.name for r in _RECORDS if all(getattr(r, k) == v for k, v in facts.items()))
