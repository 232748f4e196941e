"""The one check of a start's input values against the flow's declared inputs (§1.3).

A flow declares ``inputs: [{name, type, required}]``; a run's steps read them as
``flow.inputs.<name>``. A run started without a required value, or with a value that is
not of the declared type, would fail later, at a step, far from the person who could fix
it; so every surface (CLI, hub REST, MCP, the app's start form) refuses it at start with
the same `BAD_REQUEST` and one problem per bad input (``inputs.<name>`` and what is wrong),
before anything is written. Messages name the declared type, never the value (§8: a value
may be a token or a private URL).

Values travel as strings (the CLI's ``--input name=value``, a form field, JSON strings).
Types, compared case-insensitively:

* ``url``: an absolute ``http``/``https`` URL with a host, no spaces or control characters;
* ``number``: a finite decimal (``-1.5``, ``2e3``), no ``nan``/``inf``/``1_000``;
* ``integer`` (or ``int``): optional sign and digits;
* ``boolean`` (or ``bool``): ``true`` or ``false``;
* ``enum:a|b|c``: one of the listed values, exactly;
* anything else (``string``, ``text``, ``path`` …): any text.

A required input must be present and not blank. An optional one may be absent or blank
(blank is the same as absent); when given, it must still be of its type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .errors import Problem
from .models import FlowInput

if TYPE_CHECKING:
    from .context import FlowContext

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INTEGER = re.compile(r"[+-]?[0-9]{1,30}\Z")
_URL_BAD = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
UNKNOWN = "names an input the flow does not declare"


def type_label(declared: str) -> str:
    """How a declared type is named to a person (a form label, a problem message)."""
    kind = declared.strip().lower()
    if kind.startswith("enum:"):
        return "one of " + ", ".join(_choices(declared))
    return {"int": "integer", "bool": "boolean"}.get(kind, kind or "string")


def _choices(declared: str) -> list[str]:
    return [c for c in declared.split(":", 1)[1].split("|") if c]


def value_problem(declared: str, value: str) -> str | None:
    """What is wrong with a non-blank ``value`` for an input of type ``declared``, or None."""
    kind = declared.strip().lower()
    if kind == "url":
        parts = urlsplit(value) if not _URL_BAD.search(value) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            return "must be an http or https URL"
    elif kind == "number":
        if not _NUMBER.match(value):
            return "must be a number"
    elif kind in ("integer", "int"):
        if not _INTEGER.match(value):
            return "must be an integer"
    elif kind in ("boolean", "bool"):
        if value not in ("true", "false"):
            return "must be true or false"
    elif kind.startswith("enum:") and value not in _choices(declared):
        return "must be " + type_label(declared)
    return None


def input_problems(
    declared: Sequence[FlowInput] | None, given: Mapping[str, Any] | None
) -> list[Problem]:
    """Every problem of ``given`` against ``declared``, in declaration order (an unknown
    name first): empty when the start may go ahead."""
    given = given or {}
    inputs = list(declared or ())
    problems: list[Problem] = []
    if set(given) - {i.name for i in inputs}:
        problems.append(Problem("inputs", UNKNOWN))
    for item in inputs:
        value = given.get(item.name)
        path = f"inputs.{item.name}"
        if value is None or (isinstance(value, str) and not value.strip()):
            if item.required:
                problems.append(Problem(path, f"is required ({type_label(item.type)})"))
            continue
        if not isinstance(value, str):
            problems.append(Problem(path, "must be given as text"))
            continue
        problem = value_problem(item.type, value)
        if problem is not None:
            problems.append(Problem(path, problem))
    return problems


def start_inputs(ctx: FlowContext, flow_id: str, version: str) -> list[FlowInput]:
    """The inputs a visible flow version declares (none for one not visible): what a start
    form asks for and checks with `input_problems` before it sends anything."""
    entry = ctx.catalog.find(flow_id, version)
    if entry is None or not ctx.actor.can_see(entry.bundle.flow.scope):
        return []
    return list(entry.bundle.flow.inputs or ())


def problems_text(problems: Sequence[Problem]) -> str:
    """Problems as one line for a form: ``sheet_url is required (url); n must be …``."""
    return "; ".join(f"{p.path.removeprefix('inputs.')} {p.message}" for p in problems)
