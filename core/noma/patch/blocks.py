"""Whole-block ops: replace_block, add_block, delete_block, move_block, replace_body,
update_attribute, remove_attribute, rename_id, update_heading.

Each works on source lines and leaves every byte outside the touched block as it was.
Placement and blank-line rules follow design/noma-interop.md ("Patch engine").
"""

from __future__ import annotations

import re
from typing import Any

from ..attrs import split_trailing_group
from ..nodes import Directive, Node, Section
from ..parser import CLOSER, HEADING, OPENER, parse
from ..slug import slugify
from .catalog import check_new_id
from .errors import (
    ID_ATTRIBUTE_PROTECTED,
    ID_CONFLICT,
    INVALID_CONTENT,
    PARENT_MISSING,
    TARGET_MISSING,
    PatchError,
)
from .opener import check_key, check_one_line, remove_attr, render_attr, set_attr, set_colons
from .state import OpState


def content_lines(content: str) -> list[str]:
    """Caller text as lines: CRLF folded, leading and trailing blank lines dropped."""
    lines = content.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def parse_one_directive(lines: list[str], what: str) -> Directive:
    """The fragment must be exactly one closed top-level directive, with no recovery."""
    frag = parse("\n".join(lines))
    blocks = [c for c in frag.children]
    problems = [n for n in frag.notes if n.severity == "error"]
    if len(blocks) != 1 or not isinstance(blocks[0], Directive) or problems:
        found = ", ".join(b.type for b in blocks) or "nothing"
        detail = f" ({problems[0].message})" if problems else ""
        raise PatchError(
            INVALID_CONTENT,
            f"{what} must be exactly one directive block (::name{{...}} ... ::); "
            f"it parses to: {found}{detail}.",
        )
    node = blocks[0]
    assert isinstance(node, Directive)
    if not node.closed or node.line != 1 or node.end_line != len(lines):
        raise PatchError(INVALID_CONTENT, f"{what} must be one closed directive block.")
    return node


def check_fragment_ids(state: OpState, frag: Directive, *, ignore: set[str] | None = None) -> None:
    doc_ids = state.subtree_ids(frag)
    seen: set[str] = set()
    for ident in sorted(doc_ids):
        if ident in seen:
            continue
        seen.add(ident)
        if state.taken(ident, ignore=ignore):
            raise PatchError(ID_CONFLICT, f"The id '{ident}' in content is already taken.")


# -- replace_block ----------------------------------------------------------------------


def replace_block(state: OpState, op: dict[str, Any]) -> None:
    node = state.directive(op["id"])
    lines = content_lines(op["content"])
    frag = parse_one_directive(lines, "replace_block content")
    check_fragment_ids(state, frag, ignore=state.subtree_ids(node))
    state.lines.splice(node.line, node.end_line, lines)


# -- add_block / move_block placement ---------------------------------------------------


def _last_text_line(state: OpState, node: Node) -> int:
    end = node.end_line
    while end > node.line and state.lines.is_blank(end):
        end -= 1
    return end


def insert_child(
    state: OpState,
    parent: Directive | Section,
    position: int | None,
    block: list[str],
    *,
    skip: Node | None = None,
) -> None:
    """Place ``block`` among ``parent``'s children at ``position`` (append when None)."""
    children = [c for c in parent.children if c is not skip]
    if position is None:
        position = len(children)
    if position < 0 or position > len(children):
        raise PatchError(
            PARENT_MISSING,
            f"position {position} is out of range: '{parent.id}' has {len(children)} "
            f"child block(s), so valid positions are 0..{len(children)}.",
        )
    lines = state.lines
    if position < len(children):
        lines.insert(children[position].line, [*block, ""])
    elif children:
        after = _last_text_line(state, children[-1])
        lines.insert(after + 1, ["", *block])
    elif isinstance(parent, Directive):
        before = parent.end_line if parent.closed else len(lines) + 1
        lines.insert(before, block)
    else:
        after = parent.line
        tail = [""] if after < len(lines) and not lines.is_blank(after + 1) else []
        lines.insert(after + 1, ["", *block, *tail])


def add_block(state: OpState, op: dict[str, Any]) -> None:
    parent = state.container(op["parent"])
    lines = content_lines(op["content"])
    frag = parse_one_directive(lines, "add_block content")
    check_fragment_ids(state, frag)
    insert_child(state, parent, op.get("position"), lines)


# -- delete_block -----------------------------------------------------------------------


def remove_lines(state: OpState, node: Node) -> None:
    """Delete ``node``'s lines and tidy one adjacent blank line (noma-interop).

    Inside a directive parent, a first child's following blank line stays (the opener is
    then followed by a blank line), as the reference leaves it; at the start of the file
    no leading blank line remains.
    """
    lines = state.lines
    start, end = node.line, node.end_line
    parent = state.parent_of(node)
    opener_before = isinstance(parent, Section) and parent.line == start - 1
    prev_blank = start == 1 or lines.is_blank(start - 1) or opener_before
    has_next = end < len(lines)
    if has_next and lines.is_blank(end + 1) and prev_blank:
        lines.delete(start, end + 1)
    elif (not has_next or not lines.is_blank(end + 1)) and start > 1 and lines.is_blank(start - 1):
        lines.delete(start - 1, end)
    else:
        lines.delete(start, end)


def delete_block(state: OpState, op: dict[str, Any]) -> None:
    node = state.directive(op["id"])
    remove_lines(state, node)


# -- move_block -------------------------------------------------------------------------


def renormalise(state: OpState, node: Directive, colons: int) -> list[str]:
    """``node``'s source lines with every directive fence in it shifted to ``colons``."""
    delta = colons - node.colons
    fences: dict[int, int] = {}
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Directive):
            fences[n.line] = n.colons + delta
            if n.closed:
                fences[n.end_line] = n.colons + delta
        stack.extend(n.children_nodes)
    out = []
    for lineno in range(node.line, node.end_line + 1):
        text = state.lines.get(lineno)
        if lineno in fences and (OPENER.match(text) or CLOSER.match(text)):
            text = set_colons(text, max(2, fences[lineno]))
        out.append(text)
    return out


def move_block(state: OpState, op: dict[str, Any]) -> None:
    node = state.directive(op["id"])
    parent = state.container(op["parent"])
    if parent is node or any(a is node for a in state.ancestors(parent)):
        raise PatchError(
            PARENT_MISSING,
            f"'{op['parent']}' is inside '{op['id']}'; a block cannot move into itself.",
        )
    colons = parent.colons + 1 if isinstance(parent, Directive) else 2
    block = renormalise(state, node, colons)
    remove_lines(state, node)
    # Position counts the parent's children after the block is removed: re-read the text.
    moved = OpState(state.lines.text())
    target_parent = moved.container(op["parent"])
    insert_child(moved, target_parent, op.get("position"), block)
    state.lines = moved.lines


# -- replace_body -----------------------------------------------------------------------


def replace_body(state: OpState, op: dict[str, Any]) -> None:
    node = state.directive(op["id"])
    if not node.closed:
        raise PatchError(
            INVALID_CONTENT, f"'{op['id']}' has no closing fence; fix it before editing its body."
        )
    body = content_lines(op["content"]) if op["content"].strip() else []
    opener = state.lines.get(node.line)
    closer = state.lines.get(node.end_line)
    parse_one_directive([opener, *body, closer], "replace_body content inside its block")
    state.lines.splice(node.line + 1, node.end_line - 1, body)


# -- attributes -------------------------------------------------------------------------


def _attribute_target(state: OpState, op: dict[str, Any]) -> tuple[Directive, str, str]:
    """The directive, key and opener line an attribute op edits; ``id`` is protected."""
    key = op["key"]
    if key == "id":
        raise PatchError(
            ID_ATTRIBUTE_PROTECTED, "The id attribute can only change through rename_id."
        )
    node = state.directive(op["id"])
    check_key(key)
    return node, key, state.lines.get(node.line)


def update_attribute(state: OpState, op: dict[str, Any]) -> None:
    if op["value"] is None:
        remove_attribute(state, op)  # value null removes the attribute (§3.1.4)
        return
    node, key, line = _attribute_target(state, op)
    state.lines.set(node.line, set_attr(line, key, render_attr(key, op["value"])))


def remove_attribute(state: OpState, op: dict[str, Any]) -> None:
    node, key, line = _attribute_target(state, op)
    new = remove_attr(line, key)
    if new is not None:  # an absent key is a noop
        state.lines.set(node.line, new)


# -- rename_id --------------------------------------------------------------------------

REFERENCE_KEYS = ("for", "parent", "dataset")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def _rewrite_links(text: str, old: str, new: str) -> str:
    # ``[[ old ]]`` is a link to ``old`` too (the validator trims); spacing is kept.
    pattern = re.compile(r"\[\[([ \t]*)" + re.escape(old) + r"([ \t]*(?:\|[^\]\n]*)?)\]\]")

    def link(m: re.Match[str]) -> str:
        return f"[[{m.group(1)}{new}{m.group(2)}]]"

    if "`" not in text:
        return pattern.sub(link, text)
    spans = [m.span() for m in _CODE_SPAN.finditer(text)]

    def repl(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in spans):
            return m.group(0)
        return link(m)

    return pattern.sub(repl, text)


def rename_id(state: OpState, op: dict[str, Any]) -> None:
    old, new = op["from"], op["to"]
    node = state.directive(old)
    check_new_id("rename_id", "to", new)
    if new == old:
        return
    if state.taken(new):
        raise PatchError(ID_CONFLICT, f"The id '{new}' already exists in the document.")
    lines = state.lines
    lines.set(node.line, set_attr(lines.get(node.line), "id", f'id="{new}"'))
    for other, _parent in state.doc.walk():
        if not isinstance(other, Directive):
            continue
        hits = [k for k in REFERENCE_KEYS if other.raw_attrs.get(k) == old]
        if hits:
            text = lines.get(other.line)
            for key in hits:
                text = set_attr(text, key, f'{key}="{new}"')
            lines.set(other.line, text)
    if old not in lines.text():
        return
    code = state.code_lines()
    for lineno in range(1, len(lines) + 1):
        text = lines.get(lineno)
        if "[[" in text and old in text and lineno not in code:
            lines.set(lineno, _rewrite_links(text, old, new))


# -- update_heading ---------------------------------------------------------------------


def update_heading(state: OpState, op: dict[str, Any]) -> None:
    node = state.lookup(op["id"])
    if not isinstance(node, Section):
        raise PatchError(
            TARGET_MISSING, f"'{op['id']}' is a directive block, not a heading section."
        )
    title = op["title"].strip()
    if not title:
        raise PatchError(INVALID_CONTENT, "A heading title is one non-empty line of text.")
    check_one_line(title, "The title", "a heading title")
    line = state.lines.get(node.line)
    m = HEADING.match(line)
    assert m is not None
    _old_title, group = split_trailing_group(m.group(2))
    attrs = group.strip() if group else ""
    if not node.explicit_id and node.id is not None and slugify(title) != node.id:
        attrs = (attrs + " " if attrs else "") + f'id="{node.id}"'
    new = m.group(1) + " " + title + (" {" + attrs + "}" if attrs else "")
    check = HEADING.match(new)
    if check is None or split_trailing_group(check.group(2))[0] != title:
        raise PatchError(
            INVALID_CONTENT,
            f"The title {title!r} would not read back as written (a trailing {{...}} group "
            "is read as attributes).",
        )
    state.lines.set(node.line, new)
