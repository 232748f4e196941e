"""Block parser for ``.noma`` documents.

One pass over the lines with a stack of open containers (document, heading sections,
directives). The grammar follows spec §6 and, where the spec is silent, the reference
tool's observed behaviour recorded in ``design/noma-interop.md``. Parsing never raises:
malformed input is recovered (Tier 2, §6.2) and every recovery is written to
``Document.notes``, kept apart from validator diagnostics.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator

from .attrs import GROUP_BODY, read_attrs, split_trailing_group
from .diagnostics import Diagnostic
from .frontmatter import load_frontmatter
from .ids import assign_ids
from .nodes import (
    Code,
    Directive,
    Document,
    Frontmatter,
    ListItem,
    ListNode,
    Node,
    Paragraph,
    Quote,
    Section,
    Table,
    ThematicBreak,
)
from .source import Source, decode, from_text, split_lines

FENCE = re.compile(r"```([A-Za-z0-9_]*)[ \t]*\Z")
CLOSER = re.compile(r"(:{2,})[ \t]*\Z")
# A name may be namespaced (``::acme::widget{…}``): segments joined by ``::``.
OPENER = re.compile(
    r"(:{2,})([A-Za-z][\w.-]*(?:::[A-Za-z][\w.-]*)*)(?:\{(" + GROUP_BODY + r")\})?[ \t]*\Z"
)
LOOKS_LIKE_OPENER = re.compile(r":{2,}[A-Za-z]")
HEADING = re.compile(r"(#{1,6})[ \t]+(\S.*)\Z")
THEMATIC = re.compile(r"(?:-{3,}|\*{3,}|_{3,})[ \t]*\Z")
BULLET = re.compile(r"[-*][ \t]+(.*)\Z")
ORDERED = re.compile(r"(\d{1,9})\.[ \t]+(.*)\Z")
SEPARATOR_CELL = re.compile(r"[ \t]*:?-{3,}:?[ \t]*\Z")

_SPECIAL_START = frozenset("`:#-*_>|0123456789")


def parse(text: str | bytes, *, chapter: str | None = None) -> Document:
    """Parse a document from text or raw bytes. Never raises.

    ``chapter`` turns on book mode (§2.3): level >= 2 section ids are scoped to
    ``<chapter>/<id>`` and the chapter slug becomes an alias of the root section.
    """
    source = decode(text) if isinstance(text, bytes) else from_text(text)
    return parse_source(source, chapter=chapter)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The AST has no reference cycles, so cyclic GC passes during the build are pure cost."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_source(source: Source, *, chapter: str | None = None) -> Document:
    with gc_paused():
        parser = _Parser(split_lines(source.body))
        doc = parser.run()
        assign_ids(doc, parser.sections, parser.directives, chapter=chapter)
    doc.bom = source.bom
    doc.chapter = chapter
    if source.invalid_utf8_at is not None:
        line, column = source.invalid_utf8_at
        doc.notes.insert(
            0,
            Diagnostic(
                "error",
                "invalid-utf8",
                "The file is not valid UTF-8; undecodable bytes are kept as they are.",
                line,
                column,
            ),
        )
    if "\x00" in source.text:
        doc.notes.append(Diagnostic("warning", "binary-content", "The file contains NUL bytes."))
    return doc


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of closed inline code spans: a run of N backticks up to the
    next run of exactly N (CommonMark). An unmatched run is literal text, so a lone
    backtick in a table cell never swallows the separators after it."""
    spans: list[tuple[int, int]] = []
    runs = list(_BACKTICKS.finditer(text))
    i = 0
    while i < len(runs):
        opener = runs[i]
        width = len(opener.group(0))
        for j in range(i + 1, len(runs)):
            if len(runs[j].group(0)) == width:
                spans.append((opener.start(), runs[j].end()))
                i = j
                break
        i += 1
    return spans


_BACKTICKS = re.compile(r"`+")


def split_table_row(line: str) -> list[str]:
    """Cells of a ``| a | b |`` row; ``|`` inside code spans and ``\\|`` do not split."""
    inner = line.strip()[1:-1]
    if "`" not in inner and "\\" not in inner:
        return [cell.strip() for cell in inner.split("|")]
    spans = code_spans(inner) if "`" in inner else []
    cells: list[str] = []
    start = 0
    i = 0
    size = len(inner)
    span = 0
    while i < size:
        ch = inner[i]
        if ch == "\\" and i + 1 < size and inner[i + 1] == "|":
            i += 2
            continue
        while span < len(spans) and spans[span][1] <= i:
            span += 1
        if ch == "|" and not (span < len(spans) and spans[span][0] <= i):
            cells.append(inner[start:i].strip())
            start = i + 1
        i += 1
    cells.append(inner[start:].strip())
    return cells


def _is_pipe_row(line: str) -> bool:
    stripped = line.rstrip()
    return len(stripped) >= 2 and stripped[0] == "|" and stripped[-1] == "|"


def _separator_align(line: str) -> list[str | None] | None:
    if not _is_pipe_row(line):
        return None
    cells = line.strip()[1:-1].split("|")
    if len(cells) < 2:
        return None
    align: list[str | None] = []
    for cell in cells:
        if not SEPARATOR_CELL.match(cell):
            return None
        cell = cell.strip()
        left, right = cell.startswith(":"), cell.endswith(":")
        align.append("center" if left and right else "left" if left else "right" if right else None)
    return align


class _Parser:
    """Holds the open-container stack for one parse."""

    def __init__(self, lines: list[str], start: int = 0, end: int | None = None) -> None:
        """``start``/``end`` (0-based, end exclusive) parse one region of ``lines`` on its own
        (`core.noma.incremental`): no frontmatter test, lookahead stops at ``end``."""
        self.lines = lines
        self.start = start
        self.n = len(lines) if end is None else end
        self.notes: list[Diagnostic] = []
        self.attr_problems: list[tuple[int, str]] = []  # (line, group text) of untidy {...}
        self.doc = Document(1, max(self.n, 1), children=[], line_count=self.n)
        # Open containers, innermost last: the document, heading sections, directives.
        self.stack: list[Node] = [self.doc]
        self.directive_colons: list[int] = []  # colon counts of open directives
        self.body_start: list[int] = []  # 0-based index of each open directive's opener
        self.sections: list[Section] = []  # every heading section, in document order
        self.directives: list[Directive] = []  # every directive, in document order
        # Pre-order nodes and their parents, for Document.walk(). Two flat lists rather than
        # a tuple per node: 100k fewer objects for the cyclic GC to scan.
        self.flat_nodes: list[Node] = []
        self.flat_parents: list[Node] = []

    # -- container helpers -------------------------------------------------------------

    def _append(self, node: Node) -> None:
        top = self.stack[-1]
        top.children.append(node)  # type: ignore[attr-defined]
        self.flat_nodes.append(node)
        self.flat_parents.append(top)

    def _note(self, severity: str, code: str, message: str, line: int) -> None:
        self.notes.append(Diagnostic(severity, code, message, line, 1))  # type: ignore[arg-type]

    def _opens_directive(self, match: re.Match[str] | None) -> bool:
        if match is None:
            return False
        colons = self.directive_colons
        return not colons or len(match.group(1)) > colons[-1]

    def _closes_directive(self, count: int) -> bool:
        return count in self.directive_colons

    def _table_start(self, i: int) -> list[str | None] | None:
        """The separator's alignments when lines ``i``, ``i+1`` start a table, else None."""
        line = self.lines[i]
        if i + 1 >= self.n or not _is_pipe_row(line):
            return None
        align = _separator_align(self.lines[i + 1])
        if align is None or len(align) != len(split_table_row(line)):
            return None
        return align

    def _colon_text_note(self, i: int) -> None:
        """A ``::`` line about to be read as text: say why, so the author can fix it."""
        line = self.lines[i]
        if CLOSER.match(line):
            self._note(
                "error",
                "unmatched-directive-closer",
                f"'{line.strip()}' closes no open directive; read as text.",
                i + 1,
            )
        elif OPENER.match(line):
            self._note(
                "error",
                "directive-depth-mismatch",
                f"'{line.strip()}' needs more colons than its parent "
                f"({self.directive_colons[-1]}) to nest; read as text.",
                i + 1,
            )
        elif LOOKS_LIKE_OPENER.match(line):
            self._note(
                "warning",
                "malformed-directive-opener",
                "This line looks like a directive opener but does not parse "
                "(check the braces and quotes); read as text.",
                i + 1,
            )

    def _interrupts(self, i: int) -> bool:
        """Does line ``i`` start a block (and so end a paragraph or a list item)?"""
        line = self.lines[i]
        c = line[0]
        if c not in _SPECIAL_START:
            return False
        if c == "`":
            return FENCE.match(line) is not None
        if c == ":":
            if CLOSER.match(line):
                if len(line.rstrip()) in self.directive_colons:
                    return True
            elif self._opens_directive(OPENER.match(line)):
                return True
            self._colon_text_note(i)
            return False
        if c == "#":
            return HEADING.match(line) is not None
        if c == ">":
            return True
        if c == "|":
            return self._table_start(i) is not None
        if c in "-*":
            return THEMATIC.match(line) is not None or BULLET.match(line) is not None
        if c == "_":
            return THEMATIC.match(line) is not None
        return ORDERED.match(line) is not None

    # -- the main loop -------------------------------------------------------------------

    def run(self) -> Document:
        lines = self.lines
        n = self.n
        special = _SPECIAL_START
        colons = self.directive_colons
        stack = self.stack
        closer_match = CLOSER.match
        opener_match = OPENER.match
        heading_match = HEADING.match
        interrupts = self._interrupts
        flat_nodes = self.flat_nodes
        flat_parents = self.flat_parents
        i = self._frontmatter() if self.start == 0 else self.start
        while i < n:
            line = lines[i]
            if not line:
                i += 1
                continue
            c = line[0]
            if c in special:
                if c == ":":
                    if closer_match(line):
                        count = len(line.rstrip())
                        if count in colons:
                            self._close_directive(i, count)
                            i += 1
                            continue
                    else:
                        om = opener_match(line)
                        if om is not None and (not colons or len(om[1]) > colons[-1]):
                            self._open_directive(i, om)
                            i += 1
                            continue
                    self._colon_text_note(i)
                elif c == "#":
                    m = heading_match(line)
                    if m is not None:
                        self._heading(i, m)
                        i += 1
                        continue
                elif c == "`":
                    if FENCE.match(line):
                        i = self._code(i)
                        continue
                elif c in "-*_":
                    if THEMATIC.match(line):
                        self._append(ThematicBreak(i + 1, i + 1))
                        i += 1
                        continue
                    if c != "_" and BULLET.match(line):
                        i = self._list(i, ordered=False)
                        continue
                elif c == ">":
                    i = self._quote(i)
                    continue
                elif c == "|":
                    align = self._table_start(i)
                    if align is not None:
                        i = self._table(i, align)
                        continue
                elif ORDERED.match(line):
                    i = self._list(i, ordered=True)
                    continue
            elif line.isspace():
                i += 1
                continue
            # A paragraph: runs until a blank line or a line that starts another block.
            j = i + 1
            while j < n:
                nxt = lines[j]
                if not nxt:
                    break
                c = nxt[0]
                if c in special:
                    if interrupts(j):
                        break
                elif nxt.isspace():
                    break
                j += 1
            content = line if j == i + 1 else "\n".join(lines[i:j])
            top = stack[-1]
            para = Paragraph(i + 1, j, content=content)
            top.children.append(para)  # type: ignore[attr-defined]
            flat_nodes.append(para)
            flat_parents.append(top)
            i = j
        self._finish()
        return self.doc

    # -- blocks --------------------------------------------------------------------------

    def _frontmatter(self) -> int:
        lines = self.lines
        if not lines or lines[0].rstrip() != "---":
            return 0
        for j in range(1, self.n):
            if lines[j].rstrip() == "---":
                if j == 1:
                    return 2  # an empty block: no frontmatter node
                raw = "\n".join(lines[1:j])
                data, problem = load_frontmatter(raw)
                if problem is not None:
                    self._note(problem[0], problem[1], problem[2], 1)
                node = Frontmatter(1, j + 1, data=data, raw=raw)
                self.doc.frontmatter = node
                self.doc.meta = data
                self._append(node)
                return j + 1
        return 0  # unterminated: a thematic break followed by text

    def _code(self, i: int) -> int:
        lines = self.lines
        lang = FENCE.match(lines[i]).group(1)  # type: ignore[union-attr]
        for j in range(i + 1, self.n):
            line = lines[j]
            if line[:3] == "```" and FENCE.match(line):
                self._append(
                    Code(i + 1, j + 1, lang=lang or None, content="\n".join(lines[i + 1 : j]))
                )
                return j + 1
        self._note(
            "error",
            "unclosed-code-fence",
            "Code fence is never closed; it runs to the end of the file.",
            i + 1,
        )
        self._append(
            Code(
                i + 1,
                max(self.n, i + 1),
                lang=lang or None,
                content="\n".join(lines[i + 1 :]),
                closed=False,
            )
        )
        return self.n

    def _heading(self, i: int, m: re.Match[str]) -> None:
        level = len(m.group(1))
        title, group = split_trailing_group(m.group(2))
        if group is not None:
            attrs, _raw, clean = read_attrs(group)
            if not clean:
                self.attr_problems.append((i + 1, group))
        else:
            attrs = {}
            title = title.rstrip()
        line = i + 1
        if self.directive_colons:
            leaf = Section(
                line,
                line,
                level=level,
                title=title,
                children=[],
                attrs=attrs,
                in_directive=True,
                depth=len(self.stack),
            )
            self._append(leaf)
            self.sections.append(leaf)
            return
        stack = self.stack
        while len(stack) > 1:
            top = stack[-1]
            if isinstance(top, Section) and top.level >= level:
                top.end_line = i  # the line before this heading
                stack.pop()
            else:
                break
        section = Section(
            line, line, level=level, title=title, children=[], attrs=attrs, depth=len(stack)
        )
        self._append(section)
        stack.append(section)
        self.sections.append(section)

    def _open_directive(self, i: int, m: re.Match[str]) -> None:
        fence, name, group = m.groups()
        if group:
            attrs, raw, clean = read_attrs(group)
            if not clean:
                self.attr_problems.append((i + 1, group))
        else:
            attrs, raw = {}, {}
        count = len(fence)
        stack = self.stack
        node = Directive(
            i + 1,
            i + 1,
            name=name,
            attrs=attrs,
            raw_attrs=raw,
            body="",
            children=[],
            colons=count,
            depth=len(stack),
        )
        self._append(node)
        stack.append(node)
        self.directives.append(node)
        self.directive_colons.append(count)
        self.body_start.append(i)

    def _close_directive(self, i: int, count: int) -> None:
        """Close the innermost open directive with ``count`` colons (and any inside it)."""
        while self.directive_colons:
            colons = self.directive_colons.pop()
            opener = self.body_start.pop()
            node = self.stack.pop()
            assert isinstance(node, Directive)
            node.body = "\n".join(self.lines[opener + 1 : i])
            if colons == count:
                node.end_line = i + 1
                return
            node.end_line = i
            node.closed = False
            self._note(
                "error",
                "unclosed-directive",
                f"'::{node.name}' (line {node.line}) is not closed before its parent's closer.",
                node.line,
            )

    def _list(self, i: int, *, ordered: bool) -> int:
        lines = self.lines
        n = self.n
        pattern = ORDERED if ordered else BULLET
        items: list[ListItem] = []
        while i < n:
            m = pattern.match(lines[i])
            if m is None:
                break
            parts = [m.group(2) if ordered else m.group(1)]
            j = i + 1
            while j < n:
                line = lines[j]
                if not line or line.isspace():
                    break
                if line[0] not in " \t" and line[0] in _SPECIAL_START and self._interrupts(j):
                    break
                parts.append(line)
                j += 1
            items.append(ListItem(i + 1, j, content="\n".join(parts)))
            i = j
        lst = ListNode(items[0].line, items[-1].end_line, ordered=ordered, items=items)
        self._append(lst)
        self.flat_nodes.extend(items)
        self.flat_parents.extend([lst] * len(items))
        return i

    def _quote(self, i: int) -> int:
        lines = self.lines
        n = self.n
        parts: list[str] = []
        j = i
        while j < n:
            line = lines[j]
            if not line or line[0] != ">":
                break
            text = line[1:]
            if text[:1] == " ":
                text = text[1:]
            parts.append(text)
            j += 1
        self._append(Quote(i + 1, j, content="\n".join(parts)))
        return j

    def _table(self, i: int, align: list[str | None]) -> int:
        lines = self.lines
        n = self.n
        header = split_table_row(lines[i])
        width = len(header)
        rows: list[list[str]] = []
        j = i + 2
        while j < n and _is_pipe_row(lines[j]):
            cells = split_table_row(lines[j])
            if len(cells) < width:
                cells.extend([""] * (width - len(cells)))
            elif len(cells) > width:
                del cells[width:]
            rows.append(cells)
            j += 1
        self._append(Table(i + 1, j, header=header, align=align, rows=rows))
        return j

    def _finish(self) -> None:
        last = self.n
        while len(self.stack) > 1:
            node = self.stack.pop()
            if isinstance(node, Directive):
                opener = self.body_start.pop()
                self.directive_colons.pop()
                node.body = "\n".join(self.lines[opener + 1 :])
                node.end_line = max(last, node.line)
                node.closed = False
                self._note(
                    "error",
                    "unclosed-directive",
                    f"'::{node.name}' is never closed; it runs to the end of the file.",
                    node.line,
                )
            else:
                node.end_line = max(last, node.line)
        self.doc.notes = self.notes
        self.doc.attr_problems = self.attr_problems
        self.doc._flat = (self.flat_nodes, self.flat_parents)
