"""Profile conformance: ``unknown-profile`` and ``out-of-profile-directive``.

The spec names four profiles; the allow-lists and the extra names (aliases and the
``adr``/``spec`` compositions) are format facts from noma-interop ("Format facts the
validator needs"). A document may declare several profiles; their allow-lists union.
"""

from __future__ import annotations

import re
from typing import Any

from ..diagnostics import Diagnostic
from ..nodes import Document
from ..scan_facts import is_noverify
from .registry import diag
from .rules import rule
from .scan import Scan

_COMMON = frozenset(
    {"summary", "abstract", "callout", "note", "warning", "tip", "header", "footer",
     "page_setup", "doc_protection", "toc"}
)  # fmt: skip

MINIMAL = _COMMON | {
    "figure", "citation", "footnote", "endnote", "bibliography", "math", "code", "table",
    "pagebreak",
}  # fmt: skip

TECHNICAL = _COMMON | {
    "hero", "grid", "card", "columns", "tabs", "accordion", "sidebar", "button", "api",
    "endpoint", "parameter", "example", "changelog", "instruction", "pagebreak", "figure",
    "plot", "plotly", "diagram", "dataset", "query", "code", "code_cell", "output", "control",
    "computed_metric", "computed_plot", "computed_table", "export_button", "agent_task",
    "todo", "citation", "footnote", "endnote", "bibliography", "math", "table", "html", "svg",
    "script",
}  # fmt: skip

RESEARCH = _COMMON | {
    "claim", "evidence", "counterevidence", "assumption", "risk", "hypothesis", "result",
    "limitation", "open_question", "decision", "adr", "dataset", "query", "plot", "plotly",
    "diagram", "metric", "control", "computed_metric", "computed_plot", "computed_table",
    "code", "figure", "agent_task", "todo", "instruction", "review", "comment",
    "change_request", "provenance", "confidence", "citation", "footnote", "endnote",
    "bibliography", "state_change", "math", "table", "pagebreak",
}  # fmt: skip

MEMORY = frozenset({"memory", "memory_index"})

ADR = MINIMAL | {
    "decision", "adr", "risk", "open_question", "assumption", "evidence", "counterevidence",
    "comment", "change_request", "agent_task", "todo", "citation", "state_change",
}  # fmt: skip

PROFILES: dict[str, frozenset[str]] = {
    "minimal": MINIMAL,
    "technical": TECHNICAL,
    "technical-docs": TECHNICAL,
    "research": RESEARCH,
    "research-memo": RESEARCH,
    "investment-thesis": RESEARCH,
    "memory": MEMORY,
    "agent-memory": MEMORY,
    "adr": ADR,
    "spec": TECHNICAL | RESEARCH,
}

KNOWN_PROFILES: frozenset[str] = frozenset(PROFILES)

# ``::section`` is structure, not content: it is how any document spells an explicit
# section with an id (§6.3), so every profile allows it, even ``memory``.
ALWAYS_ALLOWED = frozenset({"section"})

_SPLIT = re.compile(r"[\s,]+")


def _names(value: Any) -> list[str]:
    """A profile value as written: one name, ``"a, b"``, or a YAML list of names."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        if item is None:
            continue
        names.extend(part for part in _SPLIT.split(str(item)) if part)
    return names


def _key_line(doc: Document, key: str) -> int | None:
    """The line of a top-level frontmatter ``key:`` (the frontmatter's first line if the
    key is not written on a line of its own, e.g. in a flow mapping)."""
    fm = doc.frontmatter
    if fm is None:
        return None
    pattern = re.compile(re.escape(key) + r"[ \t]*:")
    for offset, text in enumerate(fm.raw.split("\n")):
        if pattern.match(text):
            return fm.line + 1 + offset
    return fm.line


def declared_profiles(meta: dict[str, Any], profile: str | None) -> set[str]:
    """The profile names in force: the caller's override, else the frontmatter's
    ``profile:`` and ``profiles:`` (known or not; rules look for the names they care about)."""
    if profile is not None:
        return set(_names(profile))
    return {name for key in ("profile", "profiles") for name in _names(meta.get(key))}


@rule(
    scope="document",
    codes=("unknown-profile", "out-of-profile-directive"),
    reads=("frontmatter", "kinds", "noverify"),
)
def check_profiles(scan: Scan, profile: str | None, out: list[Diagnostic]) -> None:
    """Warn on unknown names; with a known profile declared, warn on directives outside it.

    ``profile`` (the caller's override) replaces both frontmatter keys. Unknown names
    restrict nothing: with no known profile declared, no directive is out of profile.
    """
    declared_at: list[tuple[str, int | None]]
    if profile is not None:
        declared_at = [(name, None) for name in _names(profile)]
    else:
        meta = scan.doc.meta
        declared_at = []
        for key in ("profile", "profiles"):
            names = _names(meta.get(key))
            if names:
                line = _key_line(scan.doc, key)
                declared_at.extend((name, line) for name in names)
    allowed: set[str] = set()
    declared: list[str] = []
    seen: set[str] = set()
    for name, line in declared_at:
        if name in seen:
            continue
        seen.add(name)
        allow = PROFILES.get(name)
        if allow is None:
            known = ", ".join(sorted(KNOWN_PROFILES))
            out.append(
                diag(
                    "unknown-profile",
                    f'Unknown profile "{name}" (known profiles: {known}).',
                    line=line,
                )
            )
        else:
            declared.append(name)
            allowed |= allow
    if not declared:
        return
    allowed |= ALWAYS_ALLOWED
    label = ", ".join(declared)
    for name, blocks in scan.by_name.items():
        if name in allowed:
            continue
        for d in blocks:
            if not is_noverify(d.attrs):
                out.append(
                    diag(
                        "out-of-profile-directive",
                        f"::{name} is not allowed by the declared profile ({label}).",
                        d,
                    )
                )


def profile_allows(kinds: frozenset[str], profiles: set[str]) -> bool:
    """Do the declared ``profiles`` allow every directive kind in ``kinds``? With no known
    profile declared everything is allowed (`check_profiles`). What a spliced version
    asks before keeping its base's findings across directives added (`incremental_rules`)."""
    known = [PROFILES[name] for name in profiles if name in PROFILES]
    if not known:
        return True
    allowed = set(ALWAYS_ALLOWED)
    for allow in known:
        allowed |= allow
    return kinds <= allowed
