"""Source-level edits to a directive opener line's attribute group.

Edits touch only the bytes of the one attribute they change; everything else on the line
is kept as written. Trailing whitespace after the opener is dropped (noma-interop).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..attrs import AttrValue, format_value, parse_attrs
from ..parser import OPENER
from .errors import INVALID_CONTENT, INVALID_OP, PatchError

_TOKEN = re.compile(r"""([^\s={}"']+)(?:=(?:"[^"]*"?|'[^']*'?|[^\s"']+))?""")
KEY_PATTERN = re.compile(r"[A-Za-z_][\w.:-]*\Z")


@dataclass(slots=True)
class Token:
    key: str
    start: int  # offsets within the line
    end: int
    value: str  # the raw value text (no quotes); "" for a flag


def _group(line: str) -> tuple[int, int] | None:
    """(start, end) offsets of the text inside ``{...}``, or None when there is no group."""
    m = OPENER.match(line)
    if m is None or m.group(3) is None:
        return None
    return m.start(3), m.end(3)


def tokens(line: str) -> list[Token]:
    span = _group(line)
    if span is None:
        return []
    start, end = span
    out = []
    for m in _TOKEN.finditer(line, start, end):
        text = m.group(0)
        key = m.group(1)
        raw = text[len(key) + 1 :] if "=" in text else ""
        if raw[:1] in ('"', "'"):
            raw = raw[1:-1] if len(raw) > 1 and raw[-1] == raw[0] else raw[1:]
        out.append(Token(key, m.start(), m.end(), raw))
    return out


def check_key(key: str) -> None:
    if not KEY_PATTERN.match(key):
        raise PatchError(INVALID_OP, f"{key!r} is not a valid attribute name.")


def render_attr(key: str, value: AttrValue) -> str:
    """``key=value`` as written on an opener line, or `invalid_content` when the grammar
    could not read it back as this one attribute with this value (values cannot become
    structure: a line break would end the opener line and start new blocks)."""
    if isinstance(value, str):
        check_one_line(value, f"The value of '{key}'", "an attribute value")
    text = format_value(key, value)
    if text is None:
        raise PatchError(
            INVALID_CONTENT,
            f"The value of '{key}' holds both quote kinds; attribute values have no escapes, "
            "so it cannot be written.",
        )
    if not reads_back(key, value, text):
        raise PatchError(
            INVALID_CONTENT,
            f"{text!r} would not read back as the one attribute '{key}' with that value.",
        )
    return text


# Line breaks (every one str.splitlines knows, so no reader splits the line) and other
# control characters; a tab is fine.
_UNWRITABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")


def check_one_line(value: str, what: str, kind: str) -> None:
    """Refuse a value that holds a line break or a control character (tab is fine)."""
    bad = _UNWRITABLE.search(value)
    if bad is not None:
        raise PatchError(
            INVALID_CONTENT,
            f"{what} holds {_describe(bad.group(0))}; {kind} is one line of text, so it cannot "
            "be written.",
        )


def _describe(ch: str) -> str:
    if ch in "\n\r\x85\u2028\u2029\x0b\x0c\x1c\x1d\x1e":
        return "a line break"
    return f"the control character U+{ord(ch):04X}"


def reads_back(key: str, value: AttrValue, rendered: str) -> bool:
    """Does ``{rendered}`` parse as exactly ``key`` with ``value`` (raw text for strings)?"""
    m = OPENER.match("::x{" + rendered + "}")
    if m is None or m.group(3) is None:
        return False
    values, raw = parse_attrs(m.group(3))
    if list(raw) != [key]:
        return False
    if value is True:
        return values[key] is True and raw[key] == ""
    if isinstance(value, str):
        return raw[key] == value
    return (values[key] == value and type(values[key]) is type(value)) or (
        isinstance(value, float) and values[key] == value
    )


def set_attr(line: str, key: str, rendered: str) -> str:
    """Replace ``key`` in place (its last occurrence) or append it before ``}``."""
    line = line.rstrip(" \t")
    found = [t for t in tokens(line) if t.key == key]
    if found:
        tok = found[-1]
        return line[: tok.start] + rendered + line[tok.end :]
    span = _group(line)
    if span is None:
        m = OPENER.match(line)
        assert m is not None, "not a directive opener"
        return line[: m.end(2)] + "{" + rendered + "}" + line[m.end(2) :].rstrip(" \t")
    start, end = span
    inner = line[start:end]
    sep = "" if not inner.strip() else " "
    body = inner.rstrip(" \t")
    return line[:start] + body + sep + rendered + line[end:]


def remove_attr(line: str, key: str) -> str | None:
    """Remove every occurrence of ``key``; None when it is absent (a noop)."""
    line = line.rstrip(" \t")
    found = [t for t in tokens(line) if t.key == key]
    if not found:
        return None
    for tok in reversed(found):
        start, end = tok.start, tok.end
        # Take the whitespace before the token; for the first token, the whitespace after.
        left = start
        while left > 0 and line[left - 1] in " \t":
            left -= 1
        if line[left - 1 : left] == "{":
            right = end
            while right < len(line) and line[right] in " \t":
                right += 1
            line = line[:start] + line[right:]
        else:
            line = line[:left] + line[end:]
    span = _group(line)
    if span is not None and not line[span[0] : span[1]].strip():
        line = line[: span[0] - 1] + line[span[1] + 1 :]
    return line


def set_colons(line: str, count: int) -> str:
    """Rewrite the leading colon run of an opener or closer line."""
    stripped = line.lstrip(":")
    return ":" * count + stripped
