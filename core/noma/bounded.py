"""Bounds on the structured text a workspace file carries (YAML and JSON).

Frontmatter, ``::dataset`` bodies, capability sidecars and book manifests are written by
whoever wrote the workspace, and every one of them is read as data. Three shapes of small
input cost the reader far more than their size, and all three are refused here, before
any reader walks the value:

* aliases: a few hundred bytes of YAML ``&a``/``*a`` expand to billions of values
  ("billion laughs") in every reader that walks, prints or copies them, or refer to
  themselves (a cycle);
* depth: a thousand nested brackets exhaust the stack of every recursive reader after
  the loader (``str()``, ``json.dumps``, a renderer), which raises ``RecursionError``;
* numbers: ``int()`` of more than 4,300 digits raises ``ValueError``
  (``sys.int_max_str_digits``) from inside the loader.

A value that passes `check_tree` has at most ``max(MAX_NODES, len(text))`` values (so
unaliased text is never refused for its size: every value costs at least one
character) and at most `MAX_DEPTH` levels, so any later walk is linear in the text.
Refusals are `ContentRefused` (a ``ValueError``), whose message says which bound.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MAX_NODES = 100_000
"""Values an alias-expanded tree may hold beyond one per character of its text."""
MAX_DEPTH = 100
"""Nesting levels: far beyond any real dataset or frontmatter, far below the stack."""
MAX_NUMBER_CHARS = 4300
"""The longest number text read as a number: Python's ``int()`` refuses longer digit
strings (``sys.int_max_str_digits``), and no dataset needs one."""
MAX_TEXT_CHARS = 32 << 20
"""Text read as structured data at all (32 Mi characters); a larger body is shown as text."""


class ContentRefused(ValueError):
    """Structured text that would cost more to read than its size: ``str()`` says why."""


def node_budget(text: str) -> int:
    """How many values the tree read from ``text`` may hold."""
    return max(MAX_NODES, len(text))


def check_tree(value: Any, budget: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> None:
    """Raise `ContentRefused` unless ``value`` is a finite tree within the bounds.

    Iterative, so the check itself cannot overflow the stack; a shared (aliased) subtree
    is counted every time it is reached, which is what any reader after this one pays.
    """
    seen = 0
    path: set[int] = set()
    # (value, depth); a None value with depth -1 - k means "leave container k".
    stack: list[tuple[Any, int]] = [(value, 0)]
    exits: list[int] = []
    while stack:
        item, depth = stack.pop()
        if depth < 0:
            path.discard(exits.pop())
            continue
        seen += 1
        if seen > budget:
            raise ContentRefused(f"it expands to more than {budget} values (YAML aliases)")
        if isinstance(item, dict | list | tuple | set | frozenset):
            key = id(item)
            if key in path:
                raise ContentRefused("a YAML anchor refers to itself")
            if depth >= max_depth:
                raise ContentRefused(f"it is nested too deeply (more than {max_depth} levels)")
            path.add(key)
            exits.append(key)
            stack.append((None, -1))
            children = list(item.items()) if isinstance(item, dict) else item
            for child in children:
                if isinstance(item, dict):
                    stack.append((child[1], depth + 1))
                    stack.append((child[0], depth + 1))
                else:
                    stack.append((child, depth + 1))


def load_yaml_bounded(text: str, loader: Any) -> Any:
    """``yaml.load(text, Loader=loader)`` within the bounds.

    Raises ``yaml.YAMLError`` for text that is not YAML, `ContentRefused` for text that
    is YAML beyond the bounds (aliases, depth, a number too long to convert, size).
    """
    import yaml

    if len(text) > MAX_TEXT_CHARS:
        raise ContentRefused(f"it is longer than {MAX_TEXT_CHARS} characters")
    try:
        value = yaml.load(text, Loader=loader)
    except RecursionError:
        raise ContentRefused(f"it is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # int() of a number past sys.int_max_str_digits, and kin
        raise ContentRefused(_value_problem(exc)) from None
    if "&" in text or _may_nest(text):  # no anchor, no alias: the tree is the text's size
        check_tree(value, node_budget(text))
    return value


def load_json_bounded(text: str) -> Any:
    """``json.loads(text)`` within the bounds: ``ValueError`` (`ContentRefused` for a
    bound) for anything else. JSON has no aliases; depth and numbers are checked."""
    if len(text) > MAX_TEXT_CHARS:
        raise ContentRefused(f"it is longer than {MAX_TEXT_CHARS} characters")
    try:
        value = json.loads(text)
    except RecursionError:
        raise ContentRefused(f"it is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # int() of a number past sys.int_max_str_digits
        raise ContentRefused(_value_problem(exc)) from None
    if text.count("[") + text.count("{") >= MAX_DEPTH:  # JSON nests by brackets only
        check_tree(value, node_budget(text))
    return value


def _may_nest(text: str) -> bool:
    """Cheap: could ``text`` hold a value nested more than `MAX_DEPTH` levels? Each level
    costs at least one opening bracket, one ``-``, ``?`` or ``:``; fewer than `MAX_DEPTH` of
    those together means it cannot."""
    marks = text.count("[") + text.count("{") + text.count("-")
    return marks + text.count(":") + text.count("?") >= MAX_DEPTH


def _value_problem(exc: ValueError) -> str:
    """What a ``ValueError`` from inside a loader means, in one short clause."""
    text = str(exc)
    if "int_max_str_digits" in text or "Exceeds the limit" in text:
        return f"a number has more than {sys.get_int_max_str_digits()} digits"
    return "a value cannot be read (" + text.split("\n", 1)[0][:80] + ")"


def load_toml_bounded(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` within the bounds. TOML has no aliases, but ``tomllib``
    recurses per nested array or table (``RecursionError``) and converts integers with
    ``int()``; both become `ContentRefused`. Raises ``tomllib.TOMLDecodeError`` (also a
    ``ValueError``) for text that is not TOML."""
    import tomllib

    if len(text) > MAX_TEXT_CHARS:
        raise ContentRefused(f"it is longer than {MAX_TEXT_CHARS} characters")
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise ContentRefused(f"it is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as exc:
        raise ContentRefused(_value_problem(exc)) from None
    if text.count("[") + text.count("{") >= MAX_DEPTH:
        check_tree(value, node_budget(text))
    return value
