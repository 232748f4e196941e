"""Noma source highlighting for the block view and the proof diff.

A display concern only: directive fences, their attribute groups, headings, wikilinks and
code fences get a style each. It reads lines with regular expressions and never decides
what the document means (that is the parser's job), so a line it gets wrong only looks
wrong.
"""

from __future__ import annotations

import re

from rich.text import Text

from .styles import Styles

FENCE = re.compile(r"^(\s*)(:{2,})([A-Za-z_][\w-]*)?(\{.*\})?\s*$")
HEADING = re.compile(r"^(#{1,6})\s")
ATTR = re.compile(r"([A-Za-z_][\w.-]*)(?:=(\"[^\"]*\"|'[^']*'|[^\s}]+))?")
WIKILINK = re.compile(r"\[\[[^\]\n]+\]\]")
CODE_FENCE = re.compile(r"^\s*(```|~~~)")


def highlight_line(line: str, palette: Styles, in_code: bool = False) -> Text:
    text = Text(line, no_wrap=True)
    if in_code or CODE_FENCE.match(line):
        text.stylize(palette.muted)
        return text
    m = FENCE.match(line)
    if m:
        start = m.start(2)
        end = m.end(3) if m.group(3) else m.end(2)
        text.stylize(palette.fence, start, end)
        if m.group(4):
            g0 = m.start(4)
            for a in ATTR.finditer(m.group(4)[1:-1]):
                s = g0 + 1 + a.start()
                text.stylize(palette.attr_key, s, s + len(a.group(1)))
                if a.group(2):
                    v = g0 + 1 + a.start(2)
                    text.stylize(palette.attr_value, v, v + len(a.group(2)))
        return text
    if HEADING.match(line):
        text.stylize(palette.heading)
        return text
    for link in WIKILINK.finditer(line):
        text.stylize(palette.link, link.start(), link.end())
    return text


def highlight_lines(lines: list[str], palette: Styles) -> list[Text]:
    out: list[Text] = []
    in_code = False
    for line in lines:
        fence = bool(CODE_FENCE.match(line))
        out.append(highlight_line(line, palette, in_code and not fence))
        if fence:
            in_code = not in_code
    return out
