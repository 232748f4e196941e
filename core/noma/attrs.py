"""Attribute groups ``{k="v" k='v' k=bare flag}`` (noma-interop §3).

There are no backslash escapes. Values are coerced even when quoted (``"42"`` is 42,
``true`` is a boolean) except ``id``, which is always the string as written (spec §2.1).
"""

from __future__ import annotations

import re
from sys import intern
from typing import Final, cast

AttrValue = str | int | float | bool
Attrs = dict[str, AttrValue]

# One attribute: a key, then optionally =value in one of three forms.
_ATTR: Final = re.compile(r"""([^\s={}"']+)(?:(=)(?:"([^"]*)"?|'([^']*)'?|([^\s"']+)))?""")
# What `coerce` reads as a number (it tests the same with string methods; a test holds
# the two equal).
_NUMBER: Final = re.compile(r"-?\d+(?:\.\d+)?\Z")
_NUMERIC_START: Final = frozenset("-0123456789")
# The text of a brace group: quoted strings may hold braces, bare text may not.
GROUP_BODY = r"""[^{}"']*+(?:(?:"[^"]*+"|'[^']*+')[^{}"']*+)*+"""
_TRAILING_GROUP: Final = re.compile(r"\{(" + GROUP_BODY + r")\}[ \t\r]*\Z")

# Keys whose values are always kept as written.
RAW_KEYS: Final = frozenset({"id"})


# A longer digit string stays text: ``int()`` refuses it (``sys.int_max_str_digits``), and
# no attribute needs one (the same bound as `core.noma.bounded.MAX_NUMBER_CHARS`).
MAX_NUMBER_CHARS: Final = 4300


def coerce(value: str) -> AttrValue:
    """``"true"``/``"false"`` to bool, ``-?digits[.digits]`` to a number, else the string."""
    first = value[:1]
    if first not in _NUMERIC_START:
        if value == "true":
            return True
        if value == "false":
            return False
        return value
    # `_NUMBER` without the regex (its `\d` is `str.isdecimal`): one call per attribute value.
    head, dot, tail = (value[1:] if first == "-" else value).partition(".")
    if len(value) <= MAX_NUMBER_CHARS and head.isdecimal() and (not dot or tail.isdecimal()):
        if dot:
            number = float(value)
            return int(number) if number.is_integer() and abs(number) < 2**53 else number
        return int(value)
    return value


def parse_attrs(group: str) -> tuple[Attrs, dict[str, str]]:
    """Parse the inside of a brace group.

    Returns the coerced values and, beside them, the raw strings as written (the patch
    engine and ``aliases=`` need the text, not the coerced value).
    """
    return _collect(_ATTR.findall(group))


def _collect(found: list[tuple[str, str, str, str, str]]) -> tuple[Attrs, dict[str, str]]:
    """Values and raw texts. Keys are interned: a document repeats a handful of keys tens of
    thousands of times, and one string per key name is what a large tree can afford. While
    every value is its own text (quoted or bare strings: the common group), the two dicts
    are one object; the first flag, number or boolean splits them. Nothing mutates a node's
    attribute dicts (`core.noma.nodes`), so sharing is safe."""
    values: Attrs = {}
    raw: dict[str, str] | None = None  # None while it would equal ``values``
    for key, eq, dq, sq, bare in found:
        if "\\" in key:
            key = _stray_key(key)
            if not key:
                continue
        key = intern(key)
        raw = _put(values, raw, key, (dq or sq or bare) if eq else None)
    if raw is None:
        return values, cast(dict[str, str], values)
    return values, raw


def _put(
    values: Attrs, raw: dict[str, str] | None, key: str, text: str | None
) -> dict[str, str] | None:
    """Store one attribute (``text`` None: a bare flag) in ``values`` and, once a value is
    not its own text, in ``raw`` too; returns ``raw``, None while it would equal ``values``
    (both readers, `_collect` and `plain_attrs`, keep their dicts this way)."""
    if text is None:
        return _store(values, raw, key, True, "")
    return _store(values, raw, key, _value(key, text), text)


def _value(key: str, text: str) -> AttrValue:
    """The value of ``key`` written as ``text``: coerced, except the keys kept as written."""
    return text if key in RAW_KEYS else coerce(text)


# What `plain_attrs` learnt from the text between quoted values it read before: each
# such part (``" confidence=0.5 for="``) -> its bare tokens read (key, value, text; a flag
# is value True, text ``""``) and the key of the quoted value that follows (None after
# the last quote). Documents repeat a few hundred parts thousands of times (the varying
# ids and titles sit inside the quotes). Bounded (emptied when full): hostile text cannot
# grow it.
PART_MEMO_SIZE: Final = 2048
Part = tuple[tuple[tuple[str, AttrValue, str], ...], str | None]
_PARTS: Final[dict[str, Part]] = {}


def _read_part(outside: str, quoted: bool) -> Part | None:
    """`Part` of the text ``outside`` quotes; None when it is not plain there (a quoted
    value must follow a ``key=`` token; a bare token has no ``=`` first, last or twice)."""
    tokens = outside.split()
    if quoted and (not tokens or outside[-1] != "="):
        return None
    n = len(tokens)
    entries: list[tuple[str, AttrValue, str]] = []
    key: str | None = None
    for t in range(n):
        token = tokens[t]
        eq = token.find("=")
        if quoted and t == n - 1:
            if eq != len(token) - 1 or eq == 0:
                return None
            key = intern(token[:-1])
        elif eq < 0:
            entries.append((intern(token), True, ""))
        else:
            if eq == 0 or eq == len(token) - 1 or token.find("=", eq + 1) >= 0:
                return None
            name = intern(token[:eq])
            text = token[eq + 1 :]
            entries.append((name, _value(name, text), text))
    if len(_PARTS) >= PART_MEMO_SIZE:
        _PARTS.clear()
    part: Part = (tuple(entries), key)
    _PARTS[outside] = part
    return part


def _store(
    values: Attrs, raw: dict[str, str] | None, key: str, value: AttrValue, text: str
) -> dict[str, str] | None:
    """`_put` once the value is known (a flag: True, text ``""``)."""
    if raw is None and value is not text:
        # Every value so far is its own text (a str), so the copy is ``values`` as it is.
        raw = cast(dict[str, str], dict(values))
    values[key] = value
    if raw is not None:
        raw[key] = text
    return raw


def _stray_key(key: str) -> str:
    """A key holding a backslash comes from a stray ``\\"`` inside a quoted value: the value
    ended at that quote and the words after it are bare flags. The reference reads them
    without the backslash (``title="say \\"hi\\" now"`` gives ``hi`` and ``now``)."""
    return key.replace("\\", "")


# A well-formed group: tokens separated by whitespace, every quote closed, every value
# followed by whitespace or the end. One C-level match on the common path.
_STRICT_TOKEN = r"""[^\s={}"']++(?:=(?:"[^"]*+"|'[^']*+'|[^\s"'=]++))?+"""
_STRICT_GROUP: Final = re.compile(
    r"\s*+(?:" + _STRICT_TOKEN + r"(?:\s++" + _STRICT_TOKEN + r")*+)?+\s*+\Z"
)
_STRICT_AT: Final = re.compile(_STRICT_TOKEN + r"(?=\s|\Z)")


def attr_problem(group: str) -> str | None:
    """Why a brace group is not a clean list of attributes, or None.

    The lenient reader (`parse_attrs`) still takes what it can from such a group, as the
    reference does; this says what it had to skip, so the validator can point at it.
    """
    if _STRICT_GROUP.match(group) is None:
        pos = 0
        size = len(group)
        while pos < size:
            while pos < size and group[pos].isspace():
                pos += 1
            if pos >= size:
                break
            m = _STRICT_AT.match(group, pos)
            if m is None:
                bad = group[pos : pos + 24]
                if group[pos] in "\"'" or ("=" in bad.split(" ")[0] and bad.count('"') % 2):
                    return f"unclosed quote or stray text at {bad!r}"
                return f'{bad!r} is not an attribute (key, key=value, key="value")'
            pos = m.end()
        return "the attribute list does not parse cleanly"
    keys = [m[0] for m in _ATTR.findall(group)]
    if len(keys) != len(set(keys)):
        dup = next(k for k in keys if keys.count(k) > 1)
        return f"the key {dup!r} is given more than once (the last one wins)"
    return None


def read_attrs(group: str) -> tuple[Attrs, dict[str, str], bool]:
    """`parse_attrs` for the parser, plus whether the group was clean (no skipped text, no
    repeated key): one extra C-level match per group; `attr_problem` says why later."""
    plain = plain_attrs(group)
    if plain is not None:
        return plain
    found = _ATTR.findall(group)
    values, raw = _collect(found)
    clean = len(raw) == len(found) and _STRICT_GROUP.match(group) is not None
    return values, raw, clean


def plain_attrs(group: str) -> tuple[Attrs, dict[str, str], bool] | None:
    """`read_attrs` of a plain group, without regular expressions; None when it is not plain.

    Plain: no single quote, backslash or brace; double quotes paired, each quoted value
    right after ``key=`` and followed by whitespace or the end; bare values without ``=``.
    Nearly every group a document holds (``id="c1" for="e1" confidence=0.5 draft``) is,
    and a split on the quotes and on whitespace reads it in a few C-level calls where the
    token regex built a five-string tuple per attribute and the strict regex read it once
    more (a quarter of a cold parse). Any other group returns None and goes to the regexes,
    which stay the definition: the two agree on every plain group (a property test).
    """
    if "'" in group or "\\" in group or "{" in group or "}" in group:
        return None
    parts = group.split('"')
    last = len(parts) - 1
    if last % 2:
        return None  # an unpaired quote
    values: Attrs = {}
    raw: dict[str, str] | None = None  # None while it would equal ``values`` (`_put`)
    count = 0
    k = 0
    while k <= last:
        outside = parts[k]  # the text between two quoted values (or an end)
        if k and outside and not outside[0].isspace():
            return None  # text glued to a closing quote
        quoted = k < last  # a quoted value follows: the part must end with ``key=``
        part = _PARTS.get(outside)
        if part is None:
            part = _read_part(outside, quoted)
            if part is None:
                return None
        entries, key = part
        if (key is not None) != quoted:
            return None  # (a part ending in ``key=`` is only plain before a quote)
        for name, value, text in entries:
            raw = _store(values, raw, name, value, text)
        count += len(entries)
        if key is not None:
            raw = _put(values, raw, key, parts[k + 1])
            count += 1
        k += 2
    if raw is None:
        return values, cast(dict[str, str], values), len(values) == count
    return values, raw, len(raw) == count


def split_trailing_group(text: str) -> tuple[str, str | None]:
    """Split ``Title {a=1}`` into ``("Title", "a=1")``; no group gives ``(text, None)``."""
    if not text.rstrip().endswith("}"):
        return text, None
    match = _TRAILING_GROUP.search(text)
    if match is None:
        return text, None
    return text[: match.start()].rstrip(), match.group(1)


def split_aliases(value: AttrValue | None) -> list[str]:
    """``aliases="a, b c"`` splits on commas and/or whitespace."""
    if value is None or isinstance(value, bool):
        return []
    return [part for part in re.split(r"[\s,]+", str(value)) if part]


def format_number(value: int | float) -> str:
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value)


def format_value(key: str, value: AttrValue) -> str | None:
    """Render one attribute the canonical way: ``k="v"``, ``k=1``, ``flag``, ``k=false``.

    Returns None when the string cannot be written (it holds both quote kinds and the
    grammar has no escapes).
    """
    if value is True:
        return key
    if value is False:
        return f"{key}=false"
    if isinstance(value, (int, float)):  # a tuple: no union made per call
        return f"{key}={format_number(value)}"
    if '"' not in value:
        return f'{key}="{value}"'
    if "'" not in value:
        return f"{key}='{value}'"
    return None


def normal_attrs(attrs: Attrs) -> Attrs:
    """The render normal form of attribute values: ``aliases="a, b c"`` is ``"a,b,c"``
    (the reference writes the list comma-separated; both read as the same aliases)."""
    value = attrs.get("aliases")
    if not isinstance(value, str):
        return attrs
    joined = ",".join(split_aliases(value))
    return attrs if joined == value else {**attrs, "aliases": joined}


def format_attrs(attrs: Attrs) -> str:
    """``{k="v" n=1 flag}`` in normal form (`normal_attrs`), or ``""`` for no attributes."""
    if not attrs:
        return ""
    if "aliases" in attrs:
        attrs = normal_attrs(attrs)
    parts = []
    for key, value in attrs.items():
        if type(value) is str and '"' not in value:
            parts.append(key + '="' + value + '"')  # the common value: `format_value`'s first form
            continue
        text = format_value(key, value)
        parts.append(text if text is not None else f'{key}="{value}"')
    return "{" + " ".join(parts) + "}"
