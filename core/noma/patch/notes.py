"""Review ops that add a targeted block after an existing one: add_comment, add_footnote,
add_endnote, add_change_request; and resolve_comment.

New blocks go right after their target (so repeated ones read newest first), at the
target's fence depth, with attributes in the reference order (noma-interop).
"""

from __future__ import annotations

from typing import Any

from ..attrs import AttrValue
from ..nodes import Directive, Node, Section
from ..parser import CLOSER
from .blocks import content_lines, parse_one_directive
from .catalog import check_new_id
from .errors import ID_CONFLICT, TARGET_MISSING, PatchError
from .opener import render_attr, set_attr
from .state import OpState


def _build(
    state: OpState,
    name: str,
    target: Node,
    attrs: list[tuple[str, AttrValue | None]],
    body: str | None,
) -> list[str]:
    colons = ":" * state.depth_colons(target)
    group = " ".join(render_attr(k, v) for k, v in attrs if v is not None)
    lines = [f"{colons}{name}{{{group}}}"]
    if body:
        lines.extend(content_lines(body))
    lines.append(colons)
    parse_one_directive(lines, f"{name} block")
    return lines


def _place_after(state: OpState, target: Node, block: list[str]) -> None:
    lines = state.lines
    if isinstance(target, Section):
        after = target.line
        if after < len(lines) and lines.is_blank(after + 1):
            lines.insert(after + 2, [*block, ""])
        else:
            lines.insert(after + 1, ["", *block, ""])
        return
    after = target.end_line
    tail: list[str] = []
    if after < len(lines):
        following = lines.get(after + 1)
        if following.strip() and not CLOSER.match(following):
            tail = [""]
    lines.insert(after + 1, ["", *block, *tail])


def _new_id(state: OpState, op: dict[str, Any]) -> str:
    ident = str(op["id"])
    check_new_id(op["op"], "id", ident)
    if state.taken(ident):
        raise PatchError(ID_CONFLICT, f"The id '{ident}' already exists in the document.")
    return ident


def _target(state: OpState, op: dict[str, Any]) -> Node:
    return state.lookup(op["target"])


def add_comment(state: OpState, op: dict[str, Any]) -> None:
    target = _target(state, op)
    ident = _new_id(state, op)
    attrs: list[tuple[str, AttrValue | None]] = [("id", ident)]
    if "reply_to" in op:
        parent = state.lookup(op["reply_to"])
        if not (isinstance(parent, Directive) and parent.name == "comment"):
            raise PatchError(TARGET_MISSING, f"reply_to '{op['reply_to']}' is not a comment.")
        attrs.append(("reply_to", op["reply_to"]))
    else:
        attrs.append(("parent", op["target"]))
    attrs += [(k, op.get(k)) for k in ("author", "initials", "date")]
    _place_after(state, target, _build(state, "comment", target, attrs, op["content"]))


def _add_note(state: OpState, op: dict[str, Any], name: str) -> None:
    target = _target(state, op)
    ident = _new_id(state, op)
    attrs: list[tuple[str, AttrValue | None]] = [
        ("id", ident),
        ("for", op["target"]),
        ("label", op.get("label")),
    ]
    _place_after(state, target, _build(state, name, target, attrs, op["content"]))


def add_footnote(state: OpState, op: dict[str, Any]) -> None:
    _add_note(state, op, "footnote")


def add_endnote(state: OpState, op: dict[str, Any]) -> None:
    _add_note(state, op, "endnote")


def add_change_request(state: OpState, op: dict[str, Any]) -> None:
    target = _target(state, op)
    ident = _new_id(state, op)
    keys = ("target", "action", "from", "to", "text", "author", "date")
    attrs: list[tuple[str, AttrValue | None]] = [("id", ident)]
    attrs += [(k, op.get(k)) for k in keys]
    block = _build(state, "change_request", target, attrs, op.get("content"))
    _place_after(state, target, block)


def resolve_comment(state: OpState, op: dict[str, Any]) -> None:
    node = state.directive(op["id"])
    if node.name != "comment":
        raise PatchError(TARGET_MISSING, f"'{op['id']}' is a ::{node.name} block, not a ::comment.")
    line = state.lines.get(node.line)
    line = set_attr(line, "status", render_attr("status", "resolved"))
    for key in ("resolved_by", "resolved_at"):
        if key in op:
            line = set_attr(line, key, render_attr(key, op[key]))
    state.lines.set(node.line, line)
