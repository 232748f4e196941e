"""An outside edit tells the engine which lines changed (issue 28: an outside edit in the
size of the change).

The app makes a new version's lines from the shown one's (`noma_tui.relines`), which finds
the changed lines; a version known to be clean then hands them to the engine's splice as
a span, so neither the whole texts are compared again nor scanned for CR and NUL. Here
every version so loaded equals a fresh load of the same bytes, for edits that keep the
text clean and edits that bring CR, NUL, undecodable bytes or a byte-order mark in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import generate
from core.noma.api import DocumentCache, Node
from core.noma.paths_taken import observing
from noma_tui.document import LoadedDocument, load_document

PIECES = [
    "plain words\n",
    "# Top\n",
    "## Step\n",
    "### Deep {#deep}\n",
    '::claim{id="c-new" confidence=0.5}\nA claim.\n::\n',
    '::evidence{id="e-new" for="claim-1"}\nBacked.\n::\n',
    "::risk{\n",
    "::\n",
    "* item\n",
    "See [[claim-2]] and [[nowhere]].\n",
    "\n",
    "line with a CR\r\n",
    "nul \x00 here\n",
    "é and 中\n",
    "\udcff undecodable\n",
    "\ufeff",
]


def _shape(loaded: LoadedDocument) -> Any:
    doc = loaded.doc

    def row(node: Node) -> Any:
        return (type(node).__name__, node.line, node.end_line, node.id, list(node.aliases))

    return {
        "json": doc.to_json(),
        "walk": [row(n) for n, _parent in doc.walk()],
        "lines": doc.line_count,
        "notes": [(d.code, d.line, d.message) for d in doc.notes],
        "blocks": [(b.line, b.end_line, b.id) for b in loaded.blocks],
        "parents": loaded.parents,
        "diagnostics": [(r.diagnostic, r.parse_note, r.block) for r in loaded.diagnostics],
        "text": loaded.source.text,
        "split": loaded.lines.lines,
    }


@st.composite
def edit(draw: st.DrawFn, text: str) -> str:
    lines = text.split("\n")
    at = draw(st.integers(0, len(lines)))
    cut = draw(st.integers(0, 3))
    put = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=3)))
    if draw(st.integers(0, 9)) == 0:  # now and then an edit inside a line
        line = lines[min(at, len(lines) - 1)] if lines else ""
        k = draw(st.integers(0, len(line)))
        lines[min(at, len(lines) - 1) if lines else 0 : min(at, len(lines) - 1) + 1] = [
            line[:k] + put.rstrip("\n") + line[k:]
        ]
        return "\n".join(lines)
    return "\n".join(lines[:at]) + ("\n" if at else "") + put + "\n".join(lines[at + cut :])


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.data())
def test_every_outside_edit_loads_like_a_fresh_read(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "doc.noma"
    text = generate(data.draw(st.integers(1, 6)), seed=data.draw(st.integers(0, 20)))
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    cache = DocumentCache()
    shown = load_document(path, root=tmp_path, cache=cache)
    for _ in range(data.draw(st.integers(1, 5))):
        text = data.draw(edit(text))
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        loaded = load_document(path, root=tmp_path, cache=cache, shown=shown)
        fresh = load_document(path, root=tmp_path, cache=DocumentCache())
        assert _shape(loaded) == _shape(fresh)
        assert loaded.is_clean() == fresh.is_clean()
        shown = loaded


def test_a_clean_version_is_spliced_by_span_and_scanned_once(tmp_path: Path) -> None:
    path = tmp_path / "doc.noma"
    text = generate(200)
    path.write_text(text, encoding="utf-8")
    cache = DocumentCache()
    shown = load_document(path, root=tmp_path, cache=cache)
    assert shown.clean is None  # not looked at until an edit needs it
    for n in range(3):
        edited = text.replace(f"## Finding {3 + n}:", f"## Finding {3 + n} (edited):", 1)
        assert edited != text
        text = edited
        path.write_text(text, encoding="utf-8")
        with observing() as taken:
            loaded = load_document(path, root=tmp_path, cache=cache, shown=shown)
        assert taken["splice:by-span"] == 1
        assert loaded.clean is True  # carried: the next edit does not scan the text
        shown = loaded
    path.write_text(text.replace("Finding 3", "Finding\r 3", 1), encoding="utf-8")
    with observing() as taken:
        dirty = load_document(path, root=tmp_path, cache=cache, shown=shown)
    assert taken["splice:by-span"] == 0 and dirty.clean is False
    assert _shape(dirty) == _shape(load_document(path, root=tmp_path, cache=DocumentCache()))


def test_a_document_with_a_byte_order_mark_is_spliced_by_span_too(tmp_path: Path) -> None:
    """The span counts lines after the mark, as the engine's lines do."""
    path = tmp_path / "doc.noma"
    text = "\ufeff" + generate(30)
    path.write_text(text, encoding="utf-8")
    cache = DocumentCache()
    shown = load_document(path, root=tmp_path, cache=cache)
    for n in range(3):
        text = text.replace(f"## Finding {n}:", f"## Finding {n} (edited):", 1)
        path.write_text(text, encoding="utf-8")
        with observing() as taken:
            loaded = load_document(path, root=tmp_path, cache=cache, shown=shown)
        assert taken["splice:by-span"] == 1
        fresh = load_document(path, root=tmp_path, cache=DocumentCache())
        assert loaded.source.bom and _shape(loaded) == _shape(fresh)
        shown = loaded
