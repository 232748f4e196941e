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


def block(text: str, indent: str = "  ") -> str:
    """Multi-line text as the continuation of a list item (``indent`` on every later line)."""
    lines = visible(text.replace("\r\n", "\n")).split("\n")
    return ("\n" + indent).join(line.rstrip() for line in lines)


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
