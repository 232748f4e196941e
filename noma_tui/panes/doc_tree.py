"""The document tree: sections and directive blocks, filled lazily.

A 5,000-section document has ~20,000 blocks; adding them all up front costs the UI
thread about a second. So parents start collapsed and get their children when first
expanded, long child lists are added in chunks under the tree's lock with a yield between
chunks, and a new version of the same shape (the usual case after an edit) keeps every
node and only relabels the rows `noma_tui.versions.diff_versions` says can differ
(`TreeNode.set_label`): an edit of one block on a 5,000-section document builds one label,
not 5,000. A change of shape rebuilds the tree, keeping cursor, expansion and scroll.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.content import Content
from textual.geometry import Region as Crop
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets._tree import _TreeLine
from textual.widgets.tree import TreeNode

from ..arrangement import Region
from ..document import ROOT, LoadedDocument
from ..labels import label_for, root_label
from ..styles import Themed
from ..visible import plain
from .scrollbars import ThumbFollowsScroll

# The first rows fill the first frame; the rest follow in one step once it is drawn. The
# tree walks all its rows again after any addition, so every extra chunk costs a walk.
FIRST_CHUNK = 200
CHUNK: int | None = None


class DocumentTree(Themed, ThumbFollowsScroll, Tree[int]):
    """Node data is the block index in the current `LoadedDocument` (``-1``: the root)."""

    DEFAULT_CSS = """
    DocumentTree { scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", data=ROOT, id=id)
        self.guide_depth = 2
        self.loaded: LoadedDocument | None = None
        self._block_nodes: dict[int, TreeNode[int]] = {}
        self._filled: dict[int, int] = {}
        self._generation = 0
        # Set whenever the tree paints its rows (`render_lines`, which the screen calls in
        # the same step that hands the frame to the terminal): the rest of a long child
        # list is added only after the first rows have been on screen.
        self._painted = asyncio.Event()
        self.filter_text = ""  # `/` search: only matches and their ancestors are shown
        self.matches: list[int] = []
        # What refreshes cost (tests and the bench read them): labels built by `update`,
        # and whole rebuilds.
        self.rows_relabelled = 0
        self.rebuilds = 0
        self.splices = 0  # changes of structure shown by replacing a run of rows
        self._widths: dict[int, tuple[object, int]] = {}  # node id -> (label, cell width)

    # -- cheap overrides for big trees ---------------------------------------------------

    def get_label_width(self, node: TreeNode[int]) -> int:
        """Cached per label: the tree asks for every visible row's width whenever its
        lines are rebuilt (any row added or removed), ~30 ms for 5,000 rows uncached."""
        label = node._label
        cached = self._widths.get(node._id)
        if cached is not None and cached[0] is label:
            width = cached[1]
        else:
            text = label.plain
            # Printable ASCII is one cell a character; Rich's own count checks each
            # character against a set (~15 µs a row).
            width = len(text) if text.isascii() and text.isprintable() else label.cell_len
            self._widths[node._id] = (label, width)
        return width + 2 if node._allow_expand else width

    def _build(self) -> None:
        """The same lines, line numbers and virtual size as `Tree._build` (textual is
        pinned; `tests/tui/test_tree_build.py` holds the two equal), in one loop without a
        closure call and a width lookup per line: the tree rebuilds its lines after any
        row is added or removed, and at 20,000 rows the stock walk took ~150 ms."""
        lines: list[_TreeLine[int]] = []
        append = lines.append
        label_width = self.get_label_width
        guide = self.guide_depth
        show_root = self.show_root
        widest = 0

        def walk(path: list[TreeNode[int]], node: TreeNode[int], last: bool) -> None:
            nonlocal widest
            here = [*path, node]
            node._line = len(lines)
            append(_TreeLine(here, last))
            depth = len(here) - 1
            width = label_width(node) + (depth * guide if show_root or depth > 0 else 0)
            if width > widest:
                widest = width
            if node._expanded:
                kids = node._children
                final = len(kids) - 1
                for index, child in enumerate(kids):
                    walk(here, child, index == final)

        if show_root:
            walk([], self.root, True)
        else:
            for child in self.root._children:
                walk([], child, True)
        self._tree_lines_cached = lines
        self.virtual_size = Size(widest if lines else self.size.width, len(lines))
        if self.cursor_line != -1:
            if self.cursor_node is not None:
                self.cursor_line = self.cursor_node._line
            if self.cursor_line >= len(lines):
                self.cursor_line = -1

    def _add_rows(
        self,
        parent: TreeNode[int],
        rows: list[tuple[Text, int, bool]],
        before: TreeNode[int] | None = None,
    ) -> list[TreeNode[int]]:
        """Add ``(label, block, expandable)`` rows under ``parent`` (before ``before``, or
        at the end) with one invalidation: `TreeNode.add` invalidates the whole tree per
        row, ~50 µs each, a second for 20,000 sections."""
        made: list[TreeNode[int]] = []
        for label, block, expandable in rows:
            if "\n" in label.plain:
                label = self.process_label(label)
            node = self._add_node(parent, label, block)
            node._allow_expand = expandable
            made.append(node)
        kids = parent._children
        at = len(kids) if before is None else kids.index(before)
        kids[at:at] = made
        parent._updates += 1
        self._invalidate()
        return made

    # -- showing a document ----------------------------------------------------------------

    @property
    def filling(self) -> bool:
        """True while chunks of some child list are still being added."""
        loaded = self.loaded
        if loaded is None:
            return False
        for block, count in self._filled.items():
            kids = loaded.roots if block == ROOT else loaded.children[block]
            if count < len(kids):
                return True
        return False

    def cursor_block(self) -> int | None:
        node = self.cursor_node
        return node.data if node is not None else None

    def show(self, loaded: LoadedDocument) -> None:
        """Show ``loaded``; keep expansion and cursor when the shape is unchanged."""
        if self.filter_text:
            self.loaded = loaded
            self.set_filter(self.filter_text)
            return
        previous = self.loaded
        if previous is not None and previous.path == loaded.path:
            if previous.structure() == loaded.structure():
                self.loaded = loaded
                self.relabel()
                return
            self._rebuild(loaded, keep_from=previous)
        else:
            self._rebuild(loaded, keep_from=None)

    def update(self, loaded: LoadedDocument, rows: frozenset[int]) -> None:
        """Show a new version with the same structure as the shown one: only ``rows`` (and
        the root, which counts the diagnostics) get new labels; every node, the cursor,
        expansion and scroll stay as they are."""
        if self.filter_text:
            self.show(loaded)
            return
        self.loaded = loaded
        self._set_label(self.root, root_label(loaded, self.palette))
        nodes = self._block_nodes
        for block in rows:
            node = nodes.get(block)
            if node is not None:
                self.rows_relabelled += 1
                self._set_label(node, self._label(loaded, block))

    def splice(self, loaded: LoadedDocument, region: Region, rows: frozenset[int]) -> bool:
        """Show a new version whose structure differs from the shown one only inside
        ``region`` (`noma_tui.arrangement.Region`): the run's rows are replaced, rows after
        it are renumbered in place, the rest stay as they are. The cursor stays on its
        block and on its screen row, expansion is kept by id. False when this cannot be
        done here (a filter, chunks still being added): the caller rebuilds."""
        old = self.loaded
        if old is None or self.filter_text or self.filling:
            return False
        at, x0, x1, d, _path = region
        if at != ROOT and at >= x0:
            return False
        cursor = self.cursor_node
        cursor_line, scroll_y = self.cursor_line, self.scroll_y
        cursor_id = old.blocks[cursor.data].id if cursor is not None and cursor.data not in (
            None, ROOT) else None  # fmt: skip
        nodes, filled = self._block_nodes, self._filled
        expanded = [old.blocks[b].id for b in range(x0, x1) if b in nodes and nodes[b].is_expanded]
        for b in old.roots if at == ROOT else old.children[at]:
            if x0 <= b < x1 and b in nodes:
                nodes[b].remove()
        for b in range(x0, x1):
            if b in nodes:
                self._widths.pop(nodes[b].id, None)
        kept = {b: n for b, n in nodes.items() if b < x0}
        kept_filled = {b: n for b, n in filled.items() if b < x0}
        for b, node in nodes.items():
            if b >= x1:
                node.data = b + d
                kept[b + d] = node
        for b, count in filled.items():
            if b >= x1:
                kept_filled[b + d] = count
        self._block_nodes, self._filled = kept, kept_filled
        self.loaded = loaded
        self._generation += 1
        kids = loaded.roots if at == ROOT else loaded.children[at]
        parent = self.root if at == ROOT else kept.get(at)
        if parent is not None and at != ROOT:
            parent.allow_expand = bool(kids)
        if parent is not None and at in kept_filled:
            after = next((kept[c] for c in kids if c >= x1 + d and c in kept), None)
            run = [child for child in kids if x0 <= child < x1 + d]
            added = [
                (label_for(loaded, child, self.palette), child, bool(loaded.children[child]))
                for child in run
            ]
            kept.update(zip(run, self._add_rows(parent, added, before=after), strict=True))
            kept_filled[at] = len(kids)
        self._set_label(self.root, root_label(loaded, self.palette))
        for row in rows:
            shown = kept.get(row)
            if shown is not None and not x0 <= row < x1 + d:
                self.rows_relabelled += 1
                self._set_label(shown, self._label(loaded, row))
        for ident in expanded:
            again = loaded.block_of_id(ident) if ident else None
            if again is not None and x0 <= again < x1 + d and loaded.children[again]:
                self.reveal(again, move=False)
                kept[again].expand()
        self.splices += 1
        _ = self._tree_lines
        if cursor is not None and cursor.data in kept and kept[cursor.data] is cursor:
            target: TreeNode[int] | None = cursor
        else:
            block = loaded.block_of_id(cursor_id) if cursor_id else None
            if block is not None:
                self.reveal(block, move=False)
                _ = self._tree_lines
            target = kept.get(block) if block is not None else None
        if target is None:
            self.cursor_line = min(cursor_line, max(0, self.last_line))
            return True
        self.move_cursor(target, animate=False)
        self.scroll_to(y=scroll_y + target.line - cursor_line, animate=False, immediate=True)
        return True

    def restyle(self) -> None:
        self.relabel()

    def relabel(self) -> None:
        """Refresh every created node's label from the current document and palette."""
        loaded = self.loaded
        if loaded is None:
            return
        self._set_label(self.root, root_label(loaded, self.palette))
        for block, node in self._block_nodes.items():
            self._set_label(node, self._label(loaded, block))

    def _label(self, loaded: LoadedDocument, block: int) -> Text:
        label = label_for(loaded, block, self.palette)
        if self.filter_text:
            label.highlight_words([self.filter_text], "reverse", case_sensitive=False)
        return label

    def set_filter(self, text: str) -> int:
        """Show only the blocks matching ``text`` (id, alias, title or text) and their
        ancestors, expanded, matches highlighted; an empty ``text`` shows everything again.
        Returns the number of matching blocks."""
        loaded = self.loaded
        self.filter_text = text.strip()
        if loaded is None:
            return 0
        if not self.filter_text:
            self.matches = []
            self.border_subtitle = ""
            self._rebuild(loaded, keep_from=loaded)
            return 0
        self.matches = loaded.search(self.filter_text)
        visible: set[int] = set()
        for block in self.matches:
            visible.add(block)
            visible.update(loaded.ancestors(block))
        self._generation += 1
        self._block_nodes = {}
        self._filled = {}
        self._widths = {}
        self.clear()
        self.root.set_label(root_label(loaded, self.palette))
        self._add_visible(ROOT, visible)
        self.root.expand_all()
        count = len(self.matches)
        shown = plain(self.filter_text)  # plain text, never markup (as the diagnostics')
        self.border_subtitle = Content(f"/{shown} · {count} match{'es' if count != 1 else ''}")
        if self.matches:
            _ = self._tree_lines
            self.move_cursor(self._block_nodes[self.matches[0]])
        return count

    def _add_visible(self, block: int, visible: set[int]) -> None:
        loaded = self.loaded
        assert loaded is not None
        parent = self.root if block == ROOT else self._block_nodes[block]
        kids = loaded.roots if block == ROOT else loaded.children[block]
        for child in kids:
            if child not in visible:
                continue
            label = self._label(loaded, child)
            if any(k in visible for k in loaded.children[child]):
                self._block_nodes[child] = parent.add(label, data=child)
                self._add_visible(child, visible)
            else:
                self._block_nodes[child] = parent.add_leaf(label, data=child)
        self._filled[block] = len(kids)

    @staticmethod
    def _set_label(node: TreeNode[int], label: Text) -> None:
        if node.label != label:
            node.set_label(label)

    def _rebuild(self, loaded: LoadedDocument, keep_from: LoadedDocument | None) -> None:
        self.rebuilds += 1
        expanded: list[str] = []
        cursor_id: str | None = None
        scroll_y = self.scroll_y
        if keep_from is not None:
            for block, node in self._block_nodes.items():
                ident = keep_from.blocks[block].id
                if node.is_expanded and ident:
                    expanded.append(ident)
            current = self.cursor_block()
            if current is not None and current != ROOT:
                cursor_id = keep_from.blocks[current].id
        self._generation += 1
        self.loaded = loaded
        self._block_nodes = {}
        self._filled = {}
        self._widths = {}
        self.clear()
        self.root.set_label(root_label(loaded, self.palette))
        self._fill_chunked(ROOT)
        self.root.expand()
        if keep_from is None and len(loaded.roots) == 1 and loaded.children[loaded.roots[0]]:
            only = self._block_nodes[loaded.roots[0]]
            only.expand()
            self._fill_chunked(loaded.roots[0])
        for ident in expanded:
            again = loaded.block_of_id(ident)
            if again is not None and loaded.children[again]:
                self.reveal(again, move=False)
                self._block_nodes[again].expand()
        target = loaded.block_of_id(cursor_id) if cursor_id else None
        if target is not None:
            self.reveal(target, move=False)
            _ = self._tree_lines
            node = self._block_nodes[target]
            self.move_cursor(node, animate=False)
            if keep_from is not None:
                # Where the user left the view, as long as the cursor row is still in it.
                self.scroll_to(y=scroll_y, animate=False, immediate=True)
                line = node.line
                if not scroll_y <= line < scroll_y + self.scrollable_content_region.height:
                    self.scroll_to_node(node, animate=False)
            else:
                self.scroll_to_node(node, animate=False)
        else:
            self.cursor_line = 0

    def _fill(self, block: int, limit: int | None = None) -> bool:
        """Add the next ``limit`` children of ``block`` (all when None); True when done."""
        loaded = self.loaded
        assert loaded is not None
        parent = self.root if block == ROOT else self._block_nodes[block]
        kids = loaded.roots if block == ROOT else loaded.children[block]
        start = self._filled.get(block, 0)
        end = len(kids) if limit is None else min(len(kids), start + limit)
        palette = self.palette
        children = loaded.children
        run = kids[start:end]
        rows = [
            (
                self._label(loaded, child)
                if self.filter_text
                else label_for(loaded, child, palette),
                child,
                bool(children[child]),
            )
            for child in run
        ]
        self._block_nodes.update(zip(run, self._add_rows(parent, rows), strict=True))
        self._filled[block] = end
        return end >= len(kids)

    def _fill_chunked(self, block: int) -> None:
        if self._filled.get(block) is not None and not self._pending(block):
            return
        if not self._fill(block, FIRST_CHUNK):
            self._painted.clear()
            self.run_worker(
                self._fill_rest(block, self._generation), group="tree-fill", exit_on_error=False
            )

    def _pending(self, block: int) -> bool:
        loaded = self.loaded
        assert loaded is not None
        kids = loaded.roots if block == ROOT else loaded.children[block]
        return self._filled.get(block, 0) < len(kids)

    async def _fill_rest(self, block: int, generation: int) -> None:
        # The first chunk is drawn before the rest is added: filling 20,000 rows and
        # walking them takes the UI thread about a second, and a single yield (or a
        # refresh, which need not reach the terminal) let that run before the first
        # frame, so the tree showed nothing until it was whole. Painting is the proof.
        await self._painted.wait()
        while True:
            await asyncio.sleep(0)
            if generation != self._generation:
                return
            async with self.lock:
                if generation != self._generation or self._fill(block, CHUNK):
                    return

    def render_lines(self, crop: Crop) -> list[Strip]:
        self._painted.set()
        return super().render_lines(crop)

    def _on_tree_node_expanded(self, event: Tree.NodeExpanded[int]) -> None:
        block = event.node.data
        if block is not None and self.loaded is not None and block not in self._filled:
            self._fill_chunked(block)

    # -- moving to a block -----------------------------------------------------------------

    def reveal(self, block: int, *, move: bool = True) -> None:
        """Expand the block's ancestors (filling them as needed) and put the cursor on it."""
        loaded = self.loaded
        if loaded is None or block == ROOT or block >= len(loaded.blocks):
            return
        if self.filter_text and block not in self._block_nodes:
            self.set_filter("")  # the block is filtered out: show everything again
        for ancestor in [ROOT, *loaded.ancestors(block)]:
            if self._pending(ancestor) or ancestor not in self._filled:
                self._fill(ancestor)
            node = self.root if ancestor == ROOT else self._block_nodes[ancestor]
            if not node.is_expanded:
                node.expand()
        if move:
            _ = self._tree_lines  # rebuild line numbers now so the node's line is known
            target = self._block_nodes[block]
            self.move_cursor(target)
            self.scroll_to_node(target, animate=False)
