"""Dataset cell values: reading an op's text value through a column type, and writing it
as a YAML scalar, a JSON value or a CSV field.

Op values are strings on the wire. A column with a schema type coerces them: number and
integer columns take numbers (written unquoted), boolean columns take true/false/yes/no/
on/off/1/0 (written ``true``/``false``), any other type is text. Without a schema a value
keeps its literal type: a JSON-style number is a number, ``true``/``false`` a boolean,
``null`` a null, anything else a string (so ``"0"`` stays the number 0 and ``"yes"`` stays
text; the reference tool turns ``"0"``/``"1"`` into booleans, noma-interop). An empty value
is always the empty string, the same as a padding cell.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from ..bounded import MAX_NUMBER_CHARS
from ..frontmatter import load_yaml
from .errors import INVALID_CONTENT, PatchError

Kind = Literal["string", "number", "boolean", "null", "date"]

NUMBER_TYPES = frozenset({"number", "float", "double", "decimal", "numeric", "real"})
INTEGER_TYPES = frozenset({"integer", "int", "long"})
BOOLEAN_TYPES = frozenset({"boolean", "bool"})
DATE_TYPES = frozenset({"date", "datetime", "timestamp"})
TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})

_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?\Z")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\Z")
_INTEGER = re.compile(r"[-+]?\d+\Z")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Value:
    """A typed cell value; ``text`` is the number as written, ``true``/``false``, or the
    string itself."""

    kind: Kind
    text: str

    def python(self) -> Any:
        """The value as JSON sees it."""
        if self.kind == "number":
            return int(self.text) if _INTEGER.match(self.text) else float(self.text)
        if self.kind == "boolean":
            return self.text == "true"
        if self.kind == "null":
            return None
        return self.text


EMPTY = Value("string", "")
_CONTROL = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f\x85\u2028\u2029]")


def check_one_line(value: str, what: str = "A dataset cell") -> None:
    if _CONTROL.search(value):
        raise PatchError(
            INVALID_CONTENT,
            f"{what} holds a control character; a cell is one line of text.",
        )
    if "\n" in value or "\r" in value:
        raise PatchError(
            INVALID_CONTENT,
            f"{what} is one line of text; the value contains a line break (rows are "
            "single lines; use replace_body for multi-line cells).",
        )


def literal(text: str) -> Value:
    """A value with no schema type: it keeps the type its text spells in JSON (a number
    too long for any reader to convert stays text)."""
    if len(text) <= MAX_NUMBER_CHARS and _JSON_NUMBER.match(text):
        return Value("number", text)
    if text in ("true", "false"):
        return Value("boolean", text)
    if text == "null":
        return Value("null", text)
    return Value("string", text)


def _normal_type(type_name: Any) -> str | None:
    if isinstance(type_name, dict):
        type_name = type_name.get("type")
    return type_name.strip().lower() if isinstance(type_name, str) else None


def coerce(text: str, type_name: Any, column: str) -> Value:
    """``text`` through the column's schema type (None: no schema, literal typing)."""
    check_one_line(text)
    if text == "":
        return EMPTY
    kind = _normal_type(type_name)
    if kind is None:
        return literal(text)
    bare = text.strip()
    if kind in NUMBER_TYPES | INTEGER_TYPES and len(bare) > MAX_NUMBER_CHARS:
        raise PatchError(
            INVALID_CONTENT,
            f"column {column} is a {kind} column; a number of {len(bare)} characters is "
            f"longer than readers convert (at most {MAX_NUMBER_CHARS}).",
        )
    if kind in NUMBER_TYPES:
        if _NUMBER.match(bare):
            return Value("number", bare)
        raise PatchError(
            INVALID_CONTENT, f"column {column} is a {kind} column; {text!r} is not a number."
        )
    if kind in INTEGER_TYPES:
        if _INTEGER.match(bare):
            return Value("number", bare)
        if _NUMBER.match(bare) and float(bare).is_integer():
            return Value("number", str(int(float(bare))))
        raise PatchError(
            INVALID_CONTENT, f"column {column} is an {kind} column; {text!r} is not an integer."
        )
    if kind in BOOLEAN_TYPES:
        word = bare.lower()
        if word in TRUE_WORDS:
            return Value("boolean", "true")
        if word in FALSE_WORDS:
            return Value("boolean", "false")
        raise PatchError(
            INVALID_CONTENT,
            f"column {column} is a {kind} column; {text!r} is not one of "
            "true/false/yes/no/on/off/1/0.",
        )
    if kind in DATE_TYPES:
        return Value("date", text)
    return Value("string", text)


def infer_type(cells: list[str]) -> str:
    """The schema type of a new column, from its cells: ``number`` when every non-empty
    cell is a number, ``boolean`` when every one is true/false/yes/no/on/off, else
    ``string`` (also when there is no non-empty cell to judge by)."""
    filled = [c.strip() for c in cells if c.strip()]
    if not filled:
        return "string"
    if all(_NUMBER.match(c) for c in filled):
        return "number"
    words = (TRUE_WORDS | FALSE_WORDS) - {"1", "0"}
    if all(c.lower() in words for c in filled):
        return "boolean"
    return "string"


# -- YAML -------------------------------------------------------------------------------

_PLAIN_NEVER_START = frozenset("&*!|>'\"%@`#,[]{}")
# Fast path (no YAML load): a word every YAML reader takes as a string. Words YAML 1.1
# gives a meaning (booleans, nulls, ``nan``...) go to the real loaders instead.
_SIMPLE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*(?: [A-Za-z0-9_.\-/]+)*\Z")
_SIMPLE_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?\Z")
_YAML_WORDS = frozenset(
    ["y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "nan", "inf", ".nan", ".inf"]
)
# What a YAML 1.2 reader (e.g. js-yaml) takes as a number, boolean or null even where
# PyYAML (YAML 1.1) reads a string, such as ``1e5``: such text is quoted as well.
_YAML12_TYPED = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z"
    r"|0o[0-7]+\Z|0x[0-9a-fA-F]+\Z|[-+]?\.(?:inf|Inf|INF)\Z|\.(?:nan|NaN|NAN)\Z"
    r"|(?:true|True|TRUE|false|False|FALSE|null|Null|NULL|~)\Z"
)


def _reads_back(text: str, value: Any) -> bool:
    """Do both the project's loader and a standard YAML loader read ``[text]`` as
    ``[value]``? (A standard loader also turns dates into dates.)"""
    snippet = "[" + text + "]"
    try:
        return bool(load_yaml(snippet) == [value] and yaml.safe_load(snippet) == [value])
    except (yaml.YAMLError, ValueError):  # ValueError: a number too long to convert
        return False


def _plain_string_ok(s: str) -> bool:
    if _SIMPLE_WORD.match(s) and s.lower() not in _YAML_WORDS:
        return True
    if not s or s != s.strip() or _CONTROL.search(s):
        return False
    if any(c in s for c in ",[]{}\t") or s[0] in _PLAIN_NEVER_START:
        return False
    if s[0] in "-?:" and (len(s) == 1 or s[1] == " "):
        return False
    if ": " in s or s.endswith(":") or " #" in s or _YAML12_TYPED.match(s):
        return False
    return _reads_back(s, s)


def yaml_string(s: str) -> str:
    """``s`` as a flow scalar: plain when YAML reads it back as this very string, else
    single-quoted (``'`` doubled); control characters need double quotes."""
    if _plain_string_ok(s):
        return s
    if _CONTROL.search(s):
        return json.dumps(s, ensure_ascii=False)
    return "'" + s.replace("'", "''") + "'"


def yaml_scalar(value: Value) -> str:
    if value.kind == "number":
        if _SIMPLE_NUMBER.match(value.text):
            return value.text
        if _reads_back(value.text, value.python()) and not isinstance(load_yaml(value.text), bool):
            return value.text
        return json.dumps(value.python())
    if value.kind in ("boolean", "null"):
        return value.text
    if value.kind == "date":
        try:
            loaded = yaml.safe_load(value.text)
        except (yaml.YAMLError, ValueError):
            loaded = None
        if isinstance(loaded, _dt.date) and _reads_back(value.text, loaded):
            return value.text
    return yaml_string(value.text)


# -- CSV --------------------------------------------------------------------------------


def csv_field(text: str, delimiter: str) -> str:
    """One CSV/TSV field: quoted (``"`` doubled) when it holds the delimiter or a quote,
    or has edge spaces a reader could drop."""
    check_one_line(text)
    if delimiter in text or '"' in text or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text
