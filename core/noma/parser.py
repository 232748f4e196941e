"""Block parser for ``.noma`` documents.

One pass over the lines with a stack of open containers (document, heading sections,
directives). The grammar follows spec §6 and, where the spec is silent, the reference
tool's observed behaviour recorded in ``design/noma-interop.md``. Parsing never raises:
malformed input is recovered (Tier 2, §6.2) and every recovery is written to
``Document.notes``, kept apart from validator diagnostics.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
from sys import intern
from types import ModuleType
from typing import Any, Final, cast

from .attrs import GROUP_BODY, Attrs, read_attrs, split_aliases, split_trailing_group
from .backtick_runs import paired_runs
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
    gc_paused,
)
from .scan_facts import (
    RAW_BODY_DIRECTIVES,
    REFERENCE_KEYS,
    TARGET_DIRECTIVES,
    TARGET_KEYS,
    ScanFacts,
    is_noverify,
    keep_facts,
)
from .slug import slugify
from .source import Source, decode, from_text, split_lines

FENCE: Final = re.compile(r"```([A-Za-z0-9_]*)[ \t]*\Z")
CLOSER: Final = re.compile(r"(:{2,})[ \t]*\Z")
# A name may be namespaced (``::acme::widget{…}``): segments joined by ``::``.
OPENER: Final = re.compile(
    r"(:{2,})([A-Za-z][\w.-]*(?:::[A-Za-z][\w.-]*)*)(?:\{(" + GROUP_BODY + r")\})?[ \t]*\Z"
)
LOOKS_LIKE_OPENER: Final = re.compile(r":{2,}[A-Za-z]")
HEADING: Final = re.compile(r"(#{1,6})[ \t]+(\S.*)\Z")
THEMATIC: Final = re.compile(r"(?:-{3,}|\*{3,}|_{3,})[ \t]*\Z")
BULLET: Final = re.compile(r"[-*][ \t]+(.*)\Z")
ORDERED: Final = re.compile(r"(\d{1,9})\.[ \t]+(.*)\Z")
SEPARATOR_CELL: Final = re.compile(r"[ \t]*:?-{3,}:?[ \t]*\Z")

_SPECIAL_START: Final = frozenset("`:#-*_>|0123456789")
# Open directives at once. Nesting costs only colons, and every reader of the tree (the
# renderers, the AST's JSON, the exports) walks it recursively: a deeper opener is read as
# text with a note (``directive-too-deep``), so no document outgrows the stack.
MAX_DIRECTIVE_DEPTH: Final = 64

# Block kinds `_Parser.block_start` reports: indexes into `_Parser.run`'s builders.
# (Module constants are `Final`: the compiled copy then reads them without a lookup in
# the module's namespace, which is one dict lookup per use, per line.)
_CLOSE: Final = 0
_OPEN: Final = 1
_HEADING: Final = 2
_FENCE: Final = 3
_QUOTE: Final = 4
_TABLE: Final = 5
_BREAK: Final = 6
_BULLETS: Final = 7
_ORDERED: Final = 8
_QUOTE_START: Final = (_QUOTE, None)
_BREAK_START: Final = (_BREAK, None)
_BULLET_START: Final = (_BULLETS, None)
_ORDERED_START: Final = (_ORDERED, None)


def parse(text: str | bytes, *, chapter: str | None = None) -> Document:
    """Parse a document from text or raw bytes. Never raises.

    ``chapter`` turns on book mode (§2.3): level >= 2 section ids are scoped to
    ``<chapter>/<id>`` and the chapter slug becomes an alias of the root section.
    """
    source = decode(text) if isinstance(text, bytes) else from_text(text)
    return parse_source(source, chapter=chapter)


def parse_source(source: Source, *, chapter: str | None = None) -> Document:
    with gc_paused(promote=True):
        parser = _Parser(split_lines(source.body))
        doc = parser.run()
        assign_ids(
            doc,
            parser.sections,
            parser.blocks,
            parser.block_ids,
            parser.section_slots,
            parser.aliases,
            parser.aliased,
            chapter=chapter,
        )
        keep_facts(
            doc,
            ScanFacts(
                parser.directives,
                parser.by_name,
                parser.checked_by_name,
                parser.ref_blocks,
                parser.site_texts,
                parser.site_lines,
                parser.site_owners,
            ),
        )
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
    backtick in a table cell never swallows the separators after it. Linear in the runs
    (`backtick_runs`): a row of many unmatched widths cannot stall the parser."""
    return paired_runs(text)


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


def opener_parts(line: str) -> tuple[int, str, str | None] | None:
    """``(colons, name, group)`` of a directive opener line (`OPENER`'s three groups, the
    group None when the opener has none), or None when the line is not one.

    `OPENER` stays the definition; this reads the common shape without it (a regex match
    per directive: 1.4% of the instructions of a cold parse and validation at 5,000
    sections): an ASCII name without ``::`` segments, then nothing, or a brace group
    without single quotes whose double quotes pair up and whose braces are all inside them.
    Any other line goes to the regex, so a shape this misses costs a match, never a
    different answer (a property test holds the two equal).
    """
    start = len(line) - len(line.lstrip(":"))
    if start >= 2:
        brace = line.find("{", start)
        group: str | None = None
        if brace < 0:
            name = line[start:].rstrip(" \t")
        else:
            name = line[start:brace]
            tail = line[brace + 1 :].rstrip(" \t")
            group = tail[:-1]
            if not tail.endswith("}") or "'" in group or not _braces_quoted(group):
                name = ""
        if (
            name
            and name.isascii()
            and name[0].isalpha()
            and name.replace("-", "_").replace(".", "_").isidentifier()
        ):
            return start, name, group
    m = OPENER.match(line)
    return None if m is None else (len(m[1]), m[2], m[3])


def _braces_quoted(group: str) -> bool:
    """Do the double quotes of ``group`` pair up, with every brace inside a pair?"""
    if "{" not in group and "}" not in group:
        return not group.count('"') % 2  # no brace anywhere: only the pairing is in question
    parts = group.split('"')
    if not len(parts) % 2:
        return False
    for k in range(0, len(parts), 2):
        part = parts[k]
        if "{" in part or "}" in part:
            return False
    return True


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
    """Holds the open-container stack for one parse.

    The hot node constructors (paragraphs, sections, directives, list items) are called
    with positional arguments, in `core.noma.nodes` field order: a keyword call costs a
    third more, tens of thousands of times per large document (mypy checks the order).
    A block's ``depth`` is keyword-only in the node classes, so it is set after the call.
    """

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
        # Both together, in line order (each block is made on its first line): the id
        # pass's block list, which would otherwise be a sort of the two.
        self.blocks: list[Node] = []
        # The aliases directives gave themselves, in order, and those directives: their
        # part of the id pass is done as they are read (`_open_directive`); the sections'
        # waits for the whole outline (`core.noma.ids.assign_ids`).
        self.aliases: list[str] = []
        self.aliased: list[Node] = []
        # The id of each of `blocks`, beside it: a directive's as it is read, None for a
        # section until the id pass fills it in (`section_slots`: where each one sits).
        self.block_ids: list[str | None] = []
        self.section_slots: list[int] = []
        # Pre-order nodes and their parents, for Document.walk(). Two flat lists rather than
        # a tuple per node: 100k fewer objects for the cyclic GC to scan.
        # A top-level node's parent is recorded as None, not the document: the document
        # holds these lists, and a reference back to it would make every tree a cycle that
        # only the cyclic collector could free (`Document.walk` puts the document back).
        self.flat_nodes: list[Node] = []
        self.flat_parents: list[Node | None] = []
        # The validator walk's facts (`core.noma.scan_facts`), noted as each block is made:
        # directives by name (all, and those without ``noverify``), the checked ones with a
        # reference attribute, and the text sites holding ``[[`` (text, line, owner block).
        self.by_name: dict[str, list[Directive]] = {}
        self.checked_by_name: dict[str, list[Directive]] = {}
        self.ref_blocks: list[Directive] = []
        self.site_texts: list[str] = []
        self.site_lines: list[int] = []
        self.site_owners: list[Node | None] = []

    # -- container helpers -------------------------------------------------------------

    def _append(self, node: Node) -> None:
        top = self.stack[-1]
        top.children.append(node)  # type: ignore[attr-defined]
        self.flat_nodes.append(node)
        self.flat_parents.append(None if top is self.doc else top)

    def _site(self, text: str, line: int, own: Node | None) -> None:
        """Note ``text`` (which holds ``[[``), read in the innermost open container, as a
        link site, unless the walk would not read it there: the container's own content
        when it carries ``noverify``, or anything inside a raw-body directive. Its owner is
        the innermost directive with an id, else the innermost section (``own`` instead,
        when given: a heading in a directive body owns its own title).

        Only sections and directives are ever open, and a section inside a directive is
        a leaf, so the directives open are the top of the stack down to a section."""
        stack = self.stack
        top = len(stack) - 1
        k = top
        owner: Node | None = None
        while k > 0:
            node = stack[k]
            if isinstance(node, Directive):
                if k == top and "noverify" in node.attrs and is_noverify(node.attrs):
                    return
                if node.name in RAW_BODY_DIRECTIVES:
                    return
                if owner is None and node.id is not None:
                    owner = node
            elif isinstance(node, Section):
                if k == top and node.attrs and is_noverify(node.attrs):
                    return
                if owner is None:
                    owner = node
                break
            k -= 1
        self.site_texts.append(text)
        self.site_lines.append(line)
        self.site_owners.append(own if own is not None else owner)

    def _note(self, severity: str, code: str, message: str, line: int) -> None:
        self.notes.append(Diagnostic(severity, code, message, line, 1))  # type: ignore[arg-type]

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
        elif OPENER.match(line) and len(self.directive_colons) >= MAX_DIRECTIVE_DEPTH:
            self._note(
                "error",
                "directive-too-deep",
                f"'{line.strip()}' would nest deeper than {MAX_DIRECTIVE_DEPTH} directives; "
                "read as text.",
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

    def block_start(self, i: int) -> tuple[int, Any] | None:
        """Which block line ``i`` starts, with what its builder needs (the match, a closer's
        colon count, a table's alignments); None when the line is text.

        The one test per block kind. `run` uses it to dispatch a line, and the paragraph
        and list-item loops use it to end at the next block, so "does a block start here"
        has one answer. Like markdown-it's block rules in silent mode it changes nothing:
        the note on a ``::`` line read as text is written by the loop that reads the line
        as text (`_colon_text_note`), once. Directive lines depend on the open directives
        (a closer must match one; an opener must be deeper than the innermost).
        """
        line = self.lines[i]
        c = line[:1]
        if c not in _SPECIAL_START:
            return None
        if c == ":":
            bare = line.rstrip(" \t")
            if len(bare) >= 2 and not bare.strip(":"):  # `CLOSER`, without the regex
                count = len(bare)
                return (_CLOSE, count) if count in self.directive_colons else None
            opener = opener_parts(line)
            if opener is not None:
                colons = self.directive_colons
                if not colons or (opener[0] > colons[-1] and len(colons) < MAX_DIRECTIVE_DEPTH):
                    return (_OPEN, opener)
            return None
        if c == "#":
            m = HEADING.match(line)
            return None if m is None else (_HEADING, m)
        if c == "`":
            m = FENCE.match(line)
            return None if m is None else (_FENCE, m)
        if c == ">":
            return _QUOTE_START
        if c == "|":
            align = self._table_start(i)
            return None if align is None else (_TABLE, align)
        if c == "_" or c == "-" or c == "*":
            if THEMATIC.match(line):
                return _BREAK_START
            if c != "_" and BULLET.match(line):
                return _BULLET_START
            return None
        return _ORDERED_START if ORDERED.match(line) else None

    # -- the main loop -------------------------------------------------------------------

    def run(self) -> Document:
        lines = self.lines
        n = self.n
        special = _SPECIAL_START
        stack = self.stack
        block_start = self.block_start
        flat_nodes = self.flat_nodes
        flat_parents = self.flat_parents
        doc = self.doc
        # Indexed by block kind: each builds its block from line ``i`` and returns the
        # index of the first line after it.
        builders = (
            self._close_directive,
            self._open_directive,
            self._heading,
            self._code,
            self._quote,
            self._table,
            self._break,
            self._bullets,
            self._ordered,
        )
        i = self._frontmatter() if self.start == 0 else self.start
        while i < n:
            line = lines[i]
            if not line:
                i += 1
                continue
            c = line[0]
            if c in special:
                start = block_start(i)
                if start is not None:
                    i = builders[start[0]](i, start[1])
                    continue
                if c == ":":
                    self._colon_text_note(i)
            elif line.isspace():
                i += 1
                continue
            # A paragraph: runs until a blank line or a line that starts another block.
            j = i + 1
            start = None
            while j < n:
                nxt = lines[j]
                if not nxt:
                    break
                c = nxt[0]
                if c in special:
                    start = block_start(j)
                    if start is not None:
                        break
                    if c == ":":
                        self._colon_text_note(j)
                elif nxt.isspace():
                    break
                j += 1
            content = line if j == i + 1 else "\n".join(lines[i:j])
            top = stack[-1]
            para = Paragraph(i + 1, j, content)
            top.children.append(para)  # type: ignore[attr-defined]
            flat_nodes.append(para)
            flat_parents.append(None if top is doc else top)
            if "[[" in content:
                self._site(content, i + 1, None)
            # The block that ended the paragraph starts right here: build it now rather
            # than test its line again (a paragraph never changes what a line starts).
            i = j if start is None else builders[start[0]](j, start[1])
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

    def _code(self, i: int, m: re.Match[str]) -> int:
        lines = self.lines
        lang = m[1]
        for j in range(i + 1, self.n):
            line = lines[j]
            if line[:3] == "```" and FENCE.match(line):
                self._append(Code(i + 1, j + 1, lang or None, "\n".join(lines[i + 1 : j])))
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

    def _heading(self, i: int, m: re.Match[str]) -> int:
        level = len(m[1])
        title, group = split_trailing_group(m[2])
        if group is not None:
            attrs, _raw, clean = read_attrs(group)
            if not clean:
                self.attr_problems.append((i + 1, group))
        else:
            attrs = {}
            title = title.rstrip()
        line = i + 1
        stack = self.stack
        if self.directive_colons:
            leaf = Section(
                line,
                line,
                level=level,
                title=title,
                children=[],
                attrs=attrs,
                slug=slugify(title),
                in_directive=True,
                depth=len(stack),
            )
            self._append(leaf)
            if "[[" in title and not (attrs and is_noverify(attrs)):
                self._site(title, line, leaf)
            self.sections.append(leaf)
            self.section_slots.append(len(self.blocks))
            self.blocks.append(leaf)
            self.block_ids.append(None)
            return line
        while len(stack) > 1:
            top = stack[-1]
            if isinstance(top, Section) and top.level >= level:
                top.end_line = i  # the line before this heading
                stack.pop()
            else:
                break
        section = Section(line, line, level, title, [], attrs, slugify(title))
        section.depth = len(stack)
        parent = stack[-1]
        parent.children.append(section)  # type: ignore[attr-defined]
        self.flat_nodes.append(section)
        self.flat_parents.append(None if parent is self.doc else parent)
        stack.append(section)
        if "[[" in title:
            self._site(title, line, section)  # (it is the innermost container now)
        self.sections.append(section)
        self.section_slots.append(len(self.blocks))
        self.blocks.append(section)
        self.block_ids.append(None)
        return line

    def _open_directive(self, i: int, opener: tuple[int, str, str | None]) -> int:
        count, name, group = opener
        name = intern(name)  # a few names, tens of thousands of directives
        if group:
            attrs, raw, clean = read_attrs(group)
            if not clean:
                self.attr_problems.append((i + 1, group))
        else:
            raw = {}
            attrs = cast(Attrs, raw)  # one empty dict for both, as `read_attrs` shares them
        stack = self.stack
        parent = stack[-1]
        node = Directive(i + 1, i + 1, name, attrs, raw, "", [], count)
        node.depth = len(stack)
        ident: str | None = None
        if raw:
            # A directive's id and aliases come from its own attributes only (spec §2.1).
            ident = raw.get("id") or None
            if ident is not None:
                node.id = ident
            if "aliases" in raw:
                aliases = split_aliases(raw["aliases"])
                node.aliases = aliases
                if aliases:
                    self.aliases.extend(aliases)
                    self.aliased.append(node)
        parent.children.append(node)  # type: ignore[attr-defined]
        self.flat_nodes.append(node)
        self.flat_parents.append(None if parent is self.doc else parent)
        stack.append(node)
        self.directives.append(node)
        bucket = self.by_name.get(name)
        checked = self.checked_by_name.get(name)
        if bucket is None or checked is None:
            bucket = self.by_name[name] = []
            checked = self.checked_by_name[name] = []
        bucket.append(node)
        if not ("noverify" in attrs and is_noverify(attrs)):
            checked.append(node)
            keys = TARGET_KEYS if name in TARGET_DIRECTIVES else REFERENCE_KEYS
            if raw and not keys.isdisjoint(raw):
                self.ref_blocks.append(node)
        self.blocks.append(node)
        self.block_ids.append(ident)
        self.directive_colons.append(count)
        self.body_start.append(i)
        return i + 1

    def _close_directive(self, i: int, count: int) -> int:
        """Close the innermost open directive with ``count`` colons (and any inside it)."""
        colons_open = self.directive_colons
        while colons_open:
            colons = colons_open.pop()
            opener = self.body_start.pop()
            node = self.stack.pop()
            assert isinstance(node, Directive)
            first = opener + 1  # a one-line body (the common one) is its line, not a join
            node.body = self.lines[first] if i - first == 1 else "\n".join(self.lines[first:i])
            if colons == count:
                node.end_line = i + 1
                return i + 1
            node.end_line = i
            node.closed = False
            self._note(
                "error",
                "unclosed-directive",
                f"'::{node.name}' (line {node.line}) is not closed before its parent's closer.",
                node.line,
            )
        return i + 1  # unreachable: `block_start` only reports a closer some directive has

    def _break(self, i: int, _arg: object) -> int:
        self._append(ThematicBreak(i + 1, i + 1))
        return i + 1

    def _bullets(self, i: int, _arg: object) -> int:
        return self._list(i, ordered=False)

    def _ordered(self, i: int, _arg: object) -> int:
        return self._list(i, ordered=True)

    def _list(self, i: int, *, ordered: bool) -> int:
        lines = self.lines
        n = self.n
        special = _SPECIAL_START
        block_start = self.block_start
        pattern = ORDERED if ordered else BULLET
        group = 2 if ordered else 1
        items: list[ListItem] = []
        while i < n:
            m = pattern.match(lines[i])
            if m is None:
                break
            parts = [m[group]]
            j = i + 1
            while j < n:
                line = lines[j]
                if not line or line.isspace():
                    break
                c = line[0]
                if c in special:
                    if block_start(j) is not None:
                        break
                    if c == ":":
                        self._colon_text_note(j)
                parts.append(line)
                j += 1
            items.append(ListItem(i + 1, j, "\n".join(parts)))
            i = j
        lst = ListNode(items[0].line, items[-1].end_line, ordered, items)
        self._append(lst)
        self.flat_nodes.extend(items)
        self.flat_parents.extend([lst] * len(items))
        for item in items:
            if "[[" in item.content:
                self._site(item.content, item.line, None)
        return i

    def _quote(self, i: int, _arg: object) -> int:
        lines = self.lines
        n = self.n
        parts: list[str] = []
        j = i
        while j < n:
            line = lines[j]
            if not line or line[0] != ">":
                break
            text = line[1:]
            if text[:1] == " " or text[:1] == "\t":
                text = text[1:]
            parts.append(text)
            j += 1
        quote = Quote(i + 1, j, "\n".join(parts))
        self._append(quote)
        if "[[" in quote.content:
            self._site(quote.content, quote.line, None)
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
        self._append(Table(i + 1, j, header, align, rows))
        # Link sites: each row holding ``[[``, re-joined with ``|`` (the walk's reading;
        # a cell is a slice of its line, so a line without ``[[`` has no such cell).
        if "[[" in lines[i] and any("[[" in cell for cell in header):
            self._site("|".join(header), i + 1, None)
        for k in range(len(rows)):
            if "[[" in lines[i + 2 + k]:
                row = rows[k]
                if any("[[" in cell for cell in row):
                    self._site("|".join(row), i + 3 + k, None)
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


# == The optional compiled accelerator. setup.py compiles this module's text ABOVE this line.
#
# Why the indirection: at install, setup.py copies the text above into ``_parser_native``
# (with ``attrs.py`` as ``_attrs_native``, so the attribute reader it calls is compiled too)
# and compiles both with mypyc, recording the sha256 of the ``parser.py`` and ``attrs.py``
# it copied. Compiling ``parser.py`` itself would let a stale ``.so`` shadow an edited
# ``.py`` in an editable install; a copy under another name can never shadow anything, and
# it is used only while both sources on disk are still the ones it was built from. The pure
# definitions above stay the reference and stay reachable in `PURE` (tests compare the two).

ACCELERATED_NAMES = (
    "parse",
    "parse_source",
    "_Parser",
    "code_spans",
    "split_table_row",
    "opener_parts",
)
PURE: dict[str, Any] = {name: globals()[name] for name in ACCELERATED_NAMES}
# The sources the compiled copy is made of, by file name (setup.py reads this too).
NATIVE_SOURCES = ("parser.py", "attrs.py")


def source_digests(folder: str) -> dict[str, str]:
    """sha256 of each of `NATIVE_SOURCES` in ``folder`` (hex), as setup.py records them."""
    digests = {}
    for name in NATIVE_SOURCES:
        with open(os.path.join(folder, name), "rb") as handle:
            digests[name] = hashlib.sha256(handle.read()).hexdigest()
    return digests


def load_accelerator(folder: str) -> tuple[ModuleType | None, str]:
    """The compiled copy when it may stand in for this module, with why (or why not).

    Not when ``NOMA_PURE_PYTHON`` is set (to anything but ``0``), when none was built (or it
    does not load here), or when it was built from other sources than the ones in ``folder``
    now: an edited ``parser.py`` or ``attrs.py`` is always what runs.
    """
    if os.environ.get("NOMA_PURE_PYTHON", "0") not in ("", "0"):
        return None, "pure Python: NOMA_PURE_PYTHON is set"
    name = __name__.rpartition(".")[0] + "._parser_native"
    try:
        native = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            return None, f"pure Python: the compiled parser does not load ({exc})"
        return None, "pure Python: no compiled parser was built"
    except Exception as exc:  # a build for another Python, or a stale one that fails early
        return None, f"pure Python: the compiled parser does not load ({exc})"
    try:
        current = source_digests(folder)
    except OSError:
        return None, "pure Python: its sources cannot be read to check the build"
    if getattr(native, "SOURCE_DIGESTS", None) != current:
        return None, "pure Python: the compiled parser is stale (reinstall to rebuild it)"
    return native, "compiled with mypyc"


_native, ACCELERATOR = load_accelerator(os.path.dirname(os.path.abspath(__file__)))
ACCELERATED = _native is not None
if _native is not None:
    globals().update({name: getattr(_native, name) for name in ACCELERATED_NAMES})
del _native
