"""The document tree's own line walk (`DocumentTree._build`) against Textual's.

The app replaces `Tree._build` (textual is pinned) for speed; these hold the two equal on
random shapes: the same rows in the same order, the same `last` flags (the guides), the
same line numbers on the nodes and the same virtual size, with wide and marked labels
(whose width is not their length) among them."""

from __future__ import annotations

import random

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Tree

from noma_tui.panes.doc_tree import DocumentTree

LABELS = ["Intro", "Ünïcode title", "宽字符标题", "emoji 🙂 row", "tab\tand ⟨U+001B⟩", "x" * 70]


class TreeApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DocumentTree(id="tree")


def _grow(tree: DocumentTree, rng: random.Random) -> None:
    frontier = [tree.root]
    for block in range(rng.randint(1, 120)):
        parent = rng.choice(frontier)
        label = Text(rng.choice(LABELS) + f" {block}")
        if rng.random() < 0.4:
            node = parent.add(label, data=block, expand=rng.random() < 0.6)
            frontier.append(node)
        else:
            parent.add_leaf(label, data=block)


def _snapshot(tree: DocumentTree) -> tuple[object, ...]:
    lines = tree._tree_lines_cached
    assert lines is not None
    return (
        [([id(n) for n in line.path], line.last) for line in lines],
        [line.path[-1]._line for line in lines],
        tree.virtual_size,
    )


@pytest.mark.parametrize("show_root", [True, False])
async def test_the_walk_equals_textuals(show_root: bool) -> None:
    app = TreeApp()
    async with app.run_test(size=(80, 20)) as pilot:
        tree = app.query_one(DocumentTree)
        tree.show_root = show_root
        rng = random.Random(11)
        for _ in range(40):
            tree.clear()
            tree.root.expand()
            _grow(tree, rng)
            tree._build()
            ours = _snapshot(tree)
            Tree._build(tree)
            assert _snapshot(tree) == ours
        await pilot.pause()


async def test_rows_added_in_one_step_equal_rows_added_one_by_one() -> None:
    app = TreeApp()
    async with app.run_test(size=(80, 20)):
        tree = app.query_one(DocumentTree)
        tree.root.expand()
        one = tree.root.add("one", data=0, expand=True)
        two = tree.root.add("two", data=1, expand=True)
        rows = [(Text(f"row {i}"), 10 + i, i % 2 == 0) for i in range(5)]
        made = tree._add_rows(one, rows)
        for label, block, expandable in rows:
            (two.add if expandable else two.add_leaf)(label, data=block)
        assert [(n.label, n.data, n.allow_expand, n.parent) for n in made] == [
            (n.label, n.data, n.allow_expand, one) for n in two.children
        ]
        before = tree._add_rows(one, [(Text("first"), 99, False)], before=made[0])
        assert one.children[0] is before[0]
        assert [line.node.data for line in tree._tree_lines][:4] == [-1, 0, 99, 10]
