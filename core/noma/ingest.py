"""``noma ingest FILE.md``: Markdown (CommonMark + GFM tables) to a ``.noma`` document.

markdown-it-py finds the blocks and their source lines; each block is then written in the
Noma form the parser reads back as the same kind of block. Paragraph, list-item and quote
text is copied from the source as written (Noma's inline syntax is Markdown's), so links,
emphasis and code spans survive byte for byte. What Markdown allows and Noma cannot say is
rewritten visibly and reported as a note, never dropped:

- a paragraph line Noma would read as a block start (``::x``, ``| a |``, ``2. x`` inside a
  paragraph) gets one leading space (Markdown ignores it, Noma reads it as text);
- ``~~~``/four-backtick fences become three-backtick fences; a code line that would close
  a Noma fence gets one leading space; an info string is reduced to word characters;
- raw HTML blocks become ```` ```html ```` code (shown, never run);
- loose lists become tight (Noma items end at a blank line), setext headings ATX;
- a heading whose title ends in ``{...}`` gets an empty ``{}`` so it stays the title;
- a one-column table gets an empty second column (Noma tables need two);
- link reference definitions are kept as text where they stood;
- ``[label](#id)`` naming a heading becomes the wikilink ``[[id|label]]``;
- a ``[[wikilink]]`` that names no block of the result (an Obsidian page link) gets its
  second bracket escaped, so it reads the same but is not a broken reference;
- YAML front matter is kept; front matter that is not a YAML mapping becomes a code block.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .attrs import split_trailing_group
from .export.common import code_segments
from .frontmatter import load_frontmatter
from .ids import IdIndex, index
from .nodes import gc_paused
from .parser import BULLET, CLOSER, FENCE, HEADING, OPENER, ORDERED, THEMATIC, parse
from .slug import slugify
from .validate.references import WIKILINK

# `[label](#fragment)` (not an image): a link to a block of the same document.
_FRAGMENT_LINK = re.compile(r"(?<![!\\\]])\[([^\[\]\n]+)\]\(#([^()\s]+)\)")
_ANCHOR = re.compile(r'<a id="([^"<>]*)"></a>')
_LIST_MARKER = re.compile(r"[ \t]{0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|\Z)")
_QUOTE_MARKER = re.compile(r"[ \t]{0,3}>[ ]?")
_LANG_ALIASES = {"c++": "cpp", "c#": "csharp", "f#": "fsharp", "objective-c": "objc"}
_ALIGN = {"text-align:left": ":---", "text-align:right": "---:", "text-align:center": ":---:"}


@dataclass(slots=True)
class Ingested:
    """The ``.noma`` text and what had to be rewritten to say it in Noma."""

    text: str
    notes: list[str] = field(default_factory=list)


def _markdown_it() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Only the blocks and their source lines are used (inline text is copied as written),
    # so the inline pass -- two thirds of the parse time -- is skipped.
    md.disable("inline")
    return md


_MD = _markdown_it()


def ingest_markdown(text: str) -> Ingested:
    """Convert Markdown text to Noma text (ending with one newline, or empty)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    out = Ingested("")
    front, start = _front_matter(lines, out)
    rest = lines[start:]
    with gc_paused():  # ~10^5 short-lived token objects and no cycles: GC passes are waste
        tokens = _MD.parse("\n".join(rest))
    converted = _Blocks(rest, out).convert(tokens)
    blocks = [text for text, _code in converted]
    if front is None and blocks and blocks[0] == "---":
        blocks[0] = "***"  # a leading `---` would open frontmatter
    head = [front] if front is not None else []
    body = "\n\n".join(head + blocks)
    if "[[" in body or "](#" in body:
        known = index(parse(body))
        blocks = [
            text if code else _links(text, known, out)
            for text, (_t, code) in zip(blocks, converted, strict=True)
        ]
        body = "\n\n".join(head + blocks)
    out.text = body + "\n" if body else ""
    return out


def _links(text: str, known: IdIndex, out: Ingested) -> str:
    """Links between blocks, the Noma way (outside code spans only).

    ``[label](#id)`` naming a heading of the result becomes ``[[id|label]]``: a checked
    reference that ``rename_id`` retargets (and what ``render --to markdown`` writes back).
    ``[[x]]`` naming no block (an Obsidian page link, say) would be a ``broken-reference``;
    its second bracket is escaped so it reads as the same text.
    """

    def unlink(match: re.Match[str]) -> str:
        target = match.group(1).strip()
        if not target or known.known(target):
            return match.group(0)
        out.notes.append(f"[[{target}]] names no block here; kept as text, not a link")
        return "[\\[" + match.group(0)[2:]

    def link(match: re.Match[str]) -> str:
        label, fragment = match.group(1), unquote(match.group(2))
        if not known.known(fragment) or "|" in label or not label.strip():
            return match.group(0)
        return f"[[{fragment}]]" if label == fragment else f"[[{fragment}|{label}]]"

    parts = []
    for is_code, segment in code_segments(text):
        if not is_code:
            segment = _FRAGMENT_LINK.sub(link, WIKILINK.sub(unlink, segment))
        parts.append(segment)
    return "".join(parts)


def _front_matter(lines: list[str], out: Ingested) -> tuple[str | None, int]:
    """``---`` ... ``---`` (or ``...``) on the first lines: kept when it is a YAML mapping."""
    if not lines or lines[0].rstrip() != "---":
        return None, 0
    for j in range(1, len(lines)):
        if lines[j].rstrip() in ("---", "..."):
            raw = "\n".join(lines[1:j])
            if not raw.strip():
                return None, j + 1
            _data, problem = load_frontmatter(raw)
            if problem is None:
                return f"---\n{raw}\n---", j + 1
            out.notes.append(
                "front matter is not a YAML mapping; kept as a yaml code block instead"
            )
            return _fence(raw, "yaml", out), j + 1
    return None, 0


def _guard(line: str) -> str:
    """One leading space for a text line that Noma would read as the start of a block."""
    if not line or line[0] not in "`:#-*_>|0123456789+":
        return line
    if (
        line.startswith("::")
        or line[0] in ">|"
        or FENCE.match(line)
        or HEADING.match(line)
        or THEMATIC.match(line)
        or BULLET.match(line)
        or ORDERED.match(line)
        or CLOSER.match(line)
        or OPENER.match(line)
    ):
        return " " + line
    return line


def _fence(content: str, lang: str, out: Ingested) -> str:
    body = []
    for line in content.split("\n"):
        if FENCE.match(line):
            out.notes.append(f"a code line {line!r} would end a Noma fence; indented by one space")
            line = " " + line
        body.append(line)
    inner = "\n".join(body)
    return f"```{lang}\n{inner}\n```" if content else f"```{lang}\n```"


def _lang(info: str, out: Ingested) -> str:
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    word = _LANG_ALIASES.get(word.lower(), word)
    clean = re.sub(r"[^A-Za-z0-9_]", "", word)
    if clean != info.strip():
        out.notes.append(f"code fence info {info.strip()!r} written as {clean!r}")
    return clean


def _cell(text: str) -> str:
    """A GFM cell for a Noma pipe row: pipes escaped; with an odd number of backticks the
    Noma splitter would read a code span to the end of the row, so they become ``&#96;``."""
    if text.count("`") % 2:
        text = text.replace("`", "&#96;")
    return text.replace("|", "\\|")


class _Blocks:
    """Walks the top-level block tokens of one Markdown text."""

    def __init__(self, lines: list[str], out: Ingested) -> None:
        self.lines = lines
        self.out = out

    def convert(self, tokens: list[Token]) -> list[tuple[str, bool]]:
        """The blocks in source order, each with whether it is code (never rewritten)."""
        placed: list[tuple[int, str, bool]] = []
        covered = [False] * len(self.lines)
        i = 0
        while i < len(tokens):
            token = tokens[i]
            end = self._close_index(tokens, i)
            if token.map is not None:
                for k in range(token.map[0], min(token.map[1], len(covered))):
                    covered[k] = True
                text = self._block(tokens[i : end + 1])
                if text is not None:
                    code = token.type in ("fence", "code_block", "html_block")
                    placed.append((token.map[0], text, code))
            i = end + 1
        placed.extend((line, text, False) for line, text in self._uncovered(covered))
        placed.sort(key=lambda p: p[0])
        return [(text, code) for _line, text, code in placed]

    @staticmethod
    def _close_index(tokens: list[Token], i: int) -> int:
        if tokens[i].nesting != 1:
            return i
        depth = 0
        for j in range(i, len(tokens)):
            depth += tokens[j].nesting
            if depth == 0:
                return j
        return len(tokens) - 1

    def _uncovered(self, covered: list[bool]) -> list[tuple[int, str]]:
        """Lines no block claims: link reference definitions. Kept as text in place."""
        groups: list[tuple[int, str]] = []
        run: list[str] = []
        first = 0
        for k, line in enumerate([*self.lines, ""]):
            if k < len(self.lines) and not covered[k] and line.strip():
                if not run:
                    first = k
                run.append(_guard(line))
            elif run:
                groups.append((first, "\n".join(run)))
                run = []
        return groups

    def _source(self, token: Token) -> list[str]:
        assert token.map is not None
        return self.lines[token.map[0] : token.map[1]]

    def _block(self, group: list[Token]) -> str | None:
        head = group[0]
        kind = head.type
        if kind == "heading_open":
            return self._heading(head, group[1])
        if kind == "paragraph_open":
            return "\n".join(_guard(line) for line in self._source(head))
        if kind in ("fence", "code_block"):
            lang = _lang(head.info, self.out) if kind == "fence" else ""
            return _fence(head.content.removesuffix("\n"), lang, self.out)
        if kind == "hr":
            return "---"
        if kind in ("bullet_list_open", "ordered_list_open"):
            return self._list(group, ordered=kind == "ordered_list_open")
        if kind == "blockquote_open":
            return self._quote(head)
        if kind == "table_open":
            return self._table(group)
        if kind == "html_block":
            self.out.notes.append(
                f"raw HTML block at line {head.map[0] + 1 if head.map else '?'} kept as "
                "an html code block"
            )
            return _fence(head.content.removesuffix("\n"), "html", self.out)
        return "\n".join(self._source(head)) if head.map else None

    def _heading(self, head: Token, inline: Token) -> str | None:
        level = int(head.tag[1:])
        title = " ".join(part.strip() for part in inline.content.split("\n")).strip()
        if not title:
            self.out.notes.append("an empty heading was dropped (Noma headings need a title)")
            return None
        ident = None
        anchor = _ANCHOR.match(title)
        if anchor is not None:  # `<a id="x"></a>Title`, as `render --to markdown` writes
            ident = html.unescape(anchor.group(1))
            title = title[anchor.end() :].strip() or title
        if split_trailing_group(title)[1] is not None:
            title += " {}"  # the braces are title text, not attributes
        if ident and ident != slugify(title) and '"' not in ident:
            title += f' {{id="{ident}"}}'
        return "#" * level + " " + title

    def _list(self, group: list[Token], *, ordered: bool) -> str:
        level = group[0].level + 1
        items = [t for t in group if t.type == "list_item_open" and t.level == level]
        out = []
        for number, item in enumerate(items, 1):
            lines = [line for line in self._source(item) if line.strip()]
            first = _LIST_MARKER.sub("", lines[0], count=1) if lines else ""
            marker = f"{number}. " if ordered else "- "
            rest = [line if line[:1] in " \t" else _guard(line) for line in lines[1:]]
            out.append("\n".join([marker + first, *rest]))
        return "\n".join(out)

    def _quote(self, head: Token) -> str:
        inner = []
        for line in self._source(head):
            match = _QUOTE_MARKER.match(line)
            inner.append(line[match.end() :] if match else line)
        while inner and not inner[-1].strip():
            inner.pop()
        return "\n".join(f"> {line}" if line.strip() else ">" for line in inner)

    def _table(self, group: list[Token]) -> str:
        rows: list[list[str]] = []
        aligns: list[str] = []
        row: list[str] = []
        for token in group:
            if token.type == "tr_open":
                row = []
            elif token.type in ("th_open", "td_open"):
                if token.type == "th_open":
                    aligns.append(_ALIGN.get(str(token.attrGet("style") or ""), "---"))
            elif token.type == "inline":
                row.append(_cell(token.content))
            elif token.type == "tr_close":
                rows.append(row)
        width = len(aligns)
        if width < 2:
            self.out.notes.append("a one-column table got an empty second column")
            aligns.append("---")
            width = 2
        rows = [(r + [""] * width)[:width] for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "| " + " | ".join(aligns) + " |"]
        lines.extend("| " + " | ".join(r) + " |" for r in rows[1:])
        return "\n".join(lines)
