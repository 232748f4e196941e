"""The state one op sees: the source lines, their parse, and id lookups with §3.5 errors."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from ..ids import IdIndex, find_block, index
from ..nodes import Code, Directive, Document, Node, Section
from ..parser import parse
from .errors import ID_CONFLICT, PARENT_MISSING, TARGET_MISSING, PatchError
from .text import SourceLines


class OpState:
    """Holds one document version for one op; ops mutate ``lines`` in place."""

    def __init__(
        self, text: str, doc: Document | None = None, lines: SourceLines | None = None
    ) -> None:
        # ``lines``: the text's lines, already split (owned by this state from now on)
        self.lines = lines if lines is not None else SourceLines(text)
        self.doc = doc if doc is not None else parse(text)
        self._idx: IdIndex | None = None
        self._parents: dict[int, Node] | None = None

    @property
    def idx(self) -> IdIndex:
        """The whole id index, built on first use: finding one op's target does not need
        it (`lookup` goes through `ids.find_block`)."""
        if self._idx is None:
            self._idx = index(self.doc)
        return self._idx

    def parent_of(self, node: Node) -> Node | None:
        """The block that holds ``node`` (the document for a top-level block). Found by
        walking down the blocks whose lines hold it (children are in line order), so a
        spliced version's moved blocks stay unmade; the parent map of a whole walk when
        that finds nothing (a list item: its parent is the list)."""
        if self._parents is None:
            found = _holder(self.doc, node)
            if found is not None:
                return found
            self._parents = {}
            for child, parent in self.doc.walk():
                if parent is not None:
                    self._parents[id(child)] = parent
        return self._parents.get(id(node))

    def ancestors(self, node: Node) -> Iterator[Node]:
        parent = self.parent_of(node)
        while parent is not None and parent is not self.doc:
            yield parent
            parent = self.parent_of(parent)

    def lookup(self, ident: str, *, code: str = TARGET_MISSING, what: str = "block") -> Node:
        """Resolve a canonical id; aliases and unknown ids are refused with ``code``."""
        node, count = find_block(self.doc, ident)
        if node is None:
            owner = self.idx.alias_owner.get(ident)
            if owner is not None:
                raise PatchError(
                    code,
                    f"'{ident}' is an alias of '{owner}'; patches address canonical ids only "
                    f"(resolve it with list_ids first).",
                )
            raise PatchError(code, f"No {what} with id '{ident}' in the document.")
        if count > 1:
            raise PatchError(
                ID_CONFLICT,
                f"{count} blocks carry the id '{ident}', so it is ambiguous; "
                "fix the duplicate-id first.",
            )
        return node

    def directive(self, ident: str, *, code: str = TARGET_MISSING) -> Directive:
        node = self.lookup(ident, code=code)
        if not isinstance(node, Directive):
            raise PatchError(
                code,
                f"'{ident}' is a heading section, not a directive block; this op edits "
                "directive blocks only.",
            )
        return node

    def container(self, ident: str) -> Directive | Section:
        """A block that can take children (add_block / move_block parent)."""
        node = self.lookup(ident, code=PARENT_MISSING, what="parent block")
        if isinstance(node, Directive) or (isinstance(node, Section) and not node.in_directive):
            return node
        raise PatchError(PARENT_MISSING, f"'{ident}' does not accept child blocks.")

    def depth_colons(self, node: Node) -> int:
        """The fence width a directive placed beside ``node`` should use."""
        if isinstance(node, Directive):
            return node.colons
        for anc in self.ancestors(node):
            if isinstance(anc, Directive):
                return anc.colons + 1
        return 2

    def code_lines(self) -> set[int]:
        """Every line inside (or on) a fenced code block: never edited as text."""
        out: set[int] = set()
        for node, _parent in self.doc.walk():
            if isinstance(node, Code):
                out.update(range(node.line, node.end_line + 1))
        return out

    def subtree_ids(self, node: Node) -> set[str]:
        out = {node.id} if node.id else set()
        stack = list(node.children_nodes)
        while stack:
            n = stack.pop()
            if n.id:
                out.add(n.id)
            stack.extend(n.children_nodes)
        return out

    def taken(self, ident: str, *, ignore: set[str] | None = None) -> bool:
        if ignore and ident in ignore:
            return False
        return ident in self.idx.first or ident in self.idx.alias_owner


def _holder(doc: Document, node: Node) -> Node | None:
    """The document, section or directive whose ``children`` hold ``node``, found by line
    (at most one child per container starts on a line); None when not found that way."""
    line = node.line
    container: Node = doc
    while isinstance(container, (Document, Section, Directive)):
        kids = container.children
        k = bisect_right(kids, line, key=_line) - 1
        if k < 0:
            return None
        child = kids[k]
        if child is node:
            return container
        if child.end_line < line:
            return None
        container = child
    return None


def _line(node: Node) -> int:
    return node.line
