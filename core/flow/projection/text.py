"""Untrusted flow text made safe to place in Markdown and front matter.

Step text is data (§6 item 2). In a Markdown projection it is shown, never allowed to
reshape the file around it: control and bidi characters become visible markers (as on
the terminal, `core.noma.visible`), a line break continues the list item it is in rather
than starting a new block at the margin, inline code is fenced with more backticks than
the text holds, and front matter values are quoted scalars.
"""

from __future__ import annotations

import json
import re

from ...noma.visible import visible, visible_line

_BACKTICKS = re.compile(r"`+")


# What opens a Markdown block at the start of a line: a heading, a quote, a list item, a
# thematic break or setext underline, a fence, a table row, raw HTML.
_BLOCK_START = re.compile(r"[#>*+=~`|<-]|([0-9]{1,9})[.)]")


def block(text: str, indent: str = "  ") -> str:
    """Multi-line text as the continuation of a list item (``indent`` on every later line),
    or with ``indent=""`` as a paragraph at the margin. A line that would open a block of
    its own (``## 9.``, ``---``, ``> ``) has its first mark escaped, so it stays text."""
    lines = visible(text.replace("\r\n", "\n")).split("\n")
    out = []
    for index, raw in enumerate(lines):
        shown = raw.rstrip()
        body = shown.lstrip()
        mark = _BLOCK_START.match(body) if index > 0 or not indent else None
        if mark is not None:  # "\\#", or "1\\." (a backslash escapes punctuation only)
            at = len(shown) - len(body) + (len(mark.group(1)) if mark.group(1) else 0)
            shown = shown[:at] + "\\" + shown[at:]
        out.append(shown)
    return ("\n" + indent).join(out)


def line(text: str) -> str:
    """Text that must stay on one line (a heading, a table cell)."""
    return " ".join(visible_line(text).split())


def code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    shown = line(text)
    longest = max((len(m) for m in _BACKTICKS.findall(shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


# Characters a YAML reader refuses in a stream (non-characters) or reads as line breaks.
_YAML_UNSAFE = re.compile("[\u2028\u2029\ufffe\uffff]")


def scalar(text: str) -> str:
    """A front matter value: a double-quoted scalar (a JSON string is a valid YAML one),
    with what YAML would refuse or fold written as an escape."""
    quoted = json.dumps(line(text), ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
