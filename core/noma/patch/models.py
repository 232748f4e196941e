"""The v1.0 patch ops (§3.1 core, §1.5 extended) as pydantic models: one discriminated union
on ``op``, strict (no coercion: ``"3"`` is not a row, ``1.0`` is not an index) and closed
(an unknown field is refused), so the CLI, MCP and the app share one catalog.

The union means what ``patch-op.schema.json`` means (a test compares them on every corpus
op and on generated invalid ops). Two refusals go past the schema on purpose, because
neither is JSON text a document or transcript can hold: a string with a lone surrogate,
and a non-finite number.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from .patterns import HASH_PATTERN, ID_PATTERN, KEY_PATTERN


def _unicode(text: str) -> str:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("is not valid Unicode text (it holds a lone surrogate)") from None
    return text


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _not_id(key: str) -> str:
    if key == "id":
        raise ValueError("the id attribute can only change through rename_id")
    return key


Text = Annotated[str, AfterValidator(_unicode)]
NonEmpty = Annotated[str, StringConstraints(min_length=1), AfterValidator(_unicode)]
Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
BaseHash = Annotated[str, StringConstraints(pattern=HASH_PATTERN)]
AttrKey = Annotated[str, StringConstraints(pattern=KEY_PATTERN), AfterValidator(_not_id)]
Index = Annotated[int, Field(ge=0)]
Column = Index | NonEmpty
AttrValue = bool | int | Annotated[float, AfterValidator(_finite)] | Text
Cells = list[Text]


class Op(BaseModel):
    """Fields every op may carry; ``wire()`` is the op as JSON sends it."""

    # defer_build: a one-shot CLI pays for the one model it validates, not all 25.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)

    baseHash: BaseHash | None = None  # the wire name (§3.4)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        """An optional field is left out, never null: the schema allows null nowhere (the
        spec's ``update_attribute`` ``value: null`` is handled before, `catalog`)."""
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None:
                    raise ValueError(f"field '{key}' must not be null (leave it out instead)")
        return data

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)

    @classmethod
    def op_name(cls) -> str:
        """The ``op`` value this model is the shape of."""
        name: str = get_args(cls.model_fields["op"].annotation)[0]
        return name


class ReplaceBlock(Op):
    op: Literal["replace_block"]
    id: Id
    content: NonEmpty


class AddBlock(Op):
    op: Literal["add_block"]
    parent: Id
    content: NonEmpty
    position: Index | None = None


class DeleteBlock(Op):
    op: Literal["delete_block"]
    id: Id


class UpdateAttribute(Op):
    op: Literal["update_attribute"]
    id: Id
    key: AttrKey
    value: AttrValue


class RenameId(Op):
    op: Literal["rename_id"]
    from_: Id = Field(alias="from")
    to: Id


class ReplaceBody(Op):
    op: Literal["replace_body"]
    id: Id
    content: Text


class UpdateHeading(Op):
    op: Literal["update_heading"]
    id: Id
    title: NonEmpty


class AddComment(Op):
    op: Literal["add_comment"]
    id: Id
    target: Id
    content: NonEmpty
    author: NonEmpty | None = None
    initials: NonEmpty | None = None
    date: NonEmpty | None = None
    reply_to: Id | None = None


class ResolveComment(Op):
    op: Literal["resolve_comment"]
    id: Id
    resolved_by: NonEmpty | None = None
    resolved_at: NonEmpty | None = None


class RemoveAttribute(Op):
    op: Literal["remove_attribute"]
    id: Id
    key: AttrKey


class AddFootnote(Op):
    op: Literal["add_footnote"]
    id: Id
    target: Id
    content: NonEmpty
    label: NonEmpty | None = None


class AddEndnote(Op):
    op: Literal["add_endnote"]
    id: Id
    target: Id
    content: NonEmpty
    label: NonEmpty | None = None


class AddChangeRequest(Op):
    op: Literal["add_change_request"]
    id: Id
    target: Id
    action: Literal["insert", "delete", "replace"]
    from_: NonEmpty | None = Field(default=None, alias="from")
    to: NonEmpty | None = None
    text: NonEmpty | None = None
    content: Text | None = None
    author: NonEmpty | None = None
    date: NonEmpty | None = None

    @model_validator(mode="after")
    def _revision(self) -> AddChangeRequest:
        if self.action == "replace" and (self.from_ is None or self.to is None):
            raise ValueError("action 'replace' needs 'from' and 'to'")
        if self.action == "insert" and self.to is None and self.text is None:
            raise ValueError("action 'insert' needs 'to' or 'text'")
        if self.action == "delete" and self.from_ is None and self.text is None:
            raise ValueError("action 'delete' needs 'from' or 'text'")
        return self


class UpdateTableCell(Op):
    op: Literal["update_table_cell"]
    id: Id
    row: Index
    column: Column
    value: Text


class UpdateTableHeaderCell(Op):
    op: Literal["update_table_header_cell"]
    id: Id
    column: Column
    value: Text


class InsertTableRow(Op):
    op: Literal["insert_table_row"]
    id: Id
    row: Index
    cells: Cells


class DeleteTableRow(Op):
    op: Literal["delete_table_row"]
    id: Id
    row: Index


class InsertTableColumn(Op):
    op: Literal["insert_table_column"]
    id: Id
    column: Index
    cells: Cells
    header: Text | None = None


class DeleteTableColumn(Op):
    op: Literal["delete_table_column"]
    id: Id
    column: Column


class UpdateDatasetCell(Op):
    op: Literal["update_dataset_cell"]
    id: Id
    row: Index
    column: Column
    value: Text


class InsertDatasetRow(Op):
    op: Literal["insert_dataset_row"]
    id: Id
    row: Index
    cells: Cells


class DeleteDatasetRow(Op):
    op: Literal["delete_dataset_row"]
    id: Id
    row: Index


class InsertDatasetColumn(Op):
    op: Literal["insert_dataset_column"]
    id: Id
    column: Index
    header: NonEmpty
    cells: Cells


class DeleteDatasetColumn(Op):
    op: Literal["delete_dataset_column"]
    id: Id
    column: Column


class MoveBlock(Op):
    op: Literal["move_block"]
    id: Id
    parent: Id
    position: Index | None = None


MODELS: dict[str, type[Op]] = {
    "replace_block": ReplaceBlock,
    "add_block": AddBlock,
    "delete_block": DeleteBlock,
    "update_attribute": UpdateAttribute,
    "rename_id": RenameId,
    "replace_body": ReplaceBody,
    "update_heading": UpdateHeading,
    "add_comment": AddComment,
    "resolve_comment": ResolveComment,
    "remove_attribute": RemoveAttribute,
    "add_footnote": AddFootnote,
    "add_endnote": AddEndnote,
    "add_change_request": AddChangeRequest,
    "update_table_cell": UpdateTableCell,
    "update_table_header_cell": UpdateTableHeaderCell,
    "insert_table_row": InsertTableRow,
    "delete_table_row": DeleteTableRow,
    "insert_table_column": InsertTableColumn,
    "delete_table_column": DeleteTableColumn,
    "update_dataset_cell": UpdateDatasetCell,
    "insert_dataset_row": InsertDatasetRow,
    "delete_dataset_row": DeleteDatasetRow,
    "insert_dataset_column": InsertDatasetColumn,
    "delete_dataset_column": DeleteDatasetColumn,
    "move_block": MoveBlock,
}


PatchOp = Annotated[
    ReplaceBlock
    | AddBlock
    | DeleteBlock
    | UpdateAttribute
    | RenameId
    | ReplaceBody
    | UpdateHeading
    | AddComment
    | ResolveComment
    | RemoveAttribute
    | AddFootnote
    | AddEndnote
    | AddChangeRequest
    | UpdateTableCell
    | UpdateTableHeaderCell
    | InsertTableRow
    | DeleteTableRow
    | InsertTableColumn
    | DeleteTableColumn
    | UpdateDatasetCell
    | InsertDatasetRow
    | DeleteDatasetRow
    | InsertDatasetColumn
    | DeleteDatasetColumn
    | MoveBlock,
    Field(discriminator="op"),
]
_ADAPTER: list[TypeAdapter[Any]] = []


def patch_op_adapter() -> TypeAdapter[Any]:
    """The union as one validator (and its JSON schema); built on first use."""
    if not _ADAPTER:
        _ADAPTER.append(TypeAdapter(PatchOp))
    return _ADAPTER[0]


def parse_op(data: Any) -> Op:
    """The typed op for ``data``; raises `ValidationError` (see `catalog.check_op` for the
    §3.5 codes the wire gives it). An op with a known ``op`` name is validated by its own
    model alone (the union's discriminator would pick the same one)."""
    name = data.get("op") if isinstance(data, dict) else None
    model = MODELS.get(name) if isinstance(name, str) else None
    if model is not None:
        return model.model_validate(data)
    op: Op = patch_op_adapter().validate_python(data)
    return op


def first_problem(error: ValidationError) -> tuple[str, str]:
    """(field, message) of a validation error, in the words ``invalid_op`` uses."""
    detail = error.errors(include_url=False)[0]
    parts = list(detail["loc"])
    if parts and parts[0] in MODELS and len(parts) > 1:
        parts = parts[1:]  # the union's tag (the op name), not a field
    loc = [str(part) for part in parts if not isinstance(part, int)]
    field = loc[0] if loc else ""
    kind = detail["type"]
    if kind == "missing":
        return field, "is missing (a required field)"
    if kind == "extra_forbidden":
        return field, "is not a field of this op (unknown field)"
    message = str(detail["msg"])
    if message.startswith("Value error, "):
        return field, message[len("Value error, ") :]
    return field, "is invalid: " + message[:1].lower() + message[1:]
