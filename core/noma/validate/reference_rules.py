"""Rules the reference applies beyond §4.4 (additive codes, §4.4 allows them): citations
without a source, claim confidence, change-request revisions, ADR metadata, and the
``::memory`` block family.

They come from the reference's observable behaviour on its own shipped documents, so a
writer moving between the two tools sees the same findings. Like the §4.4 rules they
skip ``noverify`` blocks (`Scan.checked`), drop out with ``--ignore-rule`` and follow the
declared profiles.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from ..diagnostics import Diagnostic
from ..nodes import Directive
from .references import WIKILINK, _blank_code_spans
from .registry import diag
from .rules import rule
from .scan import Scan, has_value

CHANGE_ACTIONS = ("insert", "delete", "replace")
MEMORY_TYPES = ("user", "feedback", "project", "reference")
CONFIDENCE_PROFILES = frozenset({"research-memo", "investment-thesis"})
MEMORY_PROFILES = frozenset({"memory", "agent-memory"})


def _unit_number(value: Any) -> bool:
    """A number in [0, 1] (attribute values are already coerced: ``"0.5"`` is 0.5). The
    types are a tuple constant: ``int | float`` would make a union object per call."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def _has_body(d: Directive) -> bool:
    return d.body.strip() != ""


@rule(scope="block", codes=("citation-missing-source",), kinds=("citation",))
def check_citation_sources(scan: Scan, out: list[Diagnostic]) -> None:
    """A citation must say where it comes from: ``url=``, ``source=`` or ``doi=``."""
    for d in scan.checked("citation"):
        if not any(has_value(d, key) for key in ("url", "source", "doi")):
            out.append(
                diag(
                    "citation-missing-source",
                    "::citation has none of url=, source= or doi=.",
                    d,
                )
            )


@rule(
    scope="block",
    codes=("claim-invalid-confidence", "claim-missing-confidence"),
    reads=("profiles",),
    kinds=("claim",),
)
def check_claim_confidence(scan: Scan, profiles: set[str], out: list[Diagnostic]) -> None:
    """``confidence`` is a probability; research memos and theses require one."""
    required = bool(profiles & CONFIDENCE_PROFILES)
    for d in scan.checked("claim"):
        value: Any = d.attrs.get("confidence")  # (narrowed by the type test below)
        kind = type(value)
        if (kind is float or kind is int) and 0 <= value <= 1:
            continue  # the common case (a valid confidence), decided without a call
        if "confidence" not in d.raw_attrs:
            if required:
                out.append(
                    diag(
                        "claim-missing-confidence",
                        "::claim has no confidence= (required by the declared profile).",
                        d,
                    )
                )
        elif not _unit_number(value):
            out.append(
                diag(
                    "claim-invalid-confidence",
                    f'::claim confidence="{d.raw_attrs["confidence"]}" is not a number '
                    "from 0 to 1.",
                    d,
                )
            )


@rule(
    scope="block",
    codes=("change-request-invalid-action", "change-request-missing-revision-text"),
    kinds=("change_request",),
)
def check_change_requests(scan: Scan, out: list[Diagnostic]) -> None:
    """A tracked revision needs a known action and the text that action works on."""
    for d in scan.checked("change_request"):
        action = d.attrs.get("action")
        if action not in CHANGE_ACTIONS:
            shown = d.raw_attrs.get("action")
            out.append(
                diag(
                    "change-request-invalid-action",
                    f'::change_request action="{shown}" is not insert, delete or replace.'
                    if shown is not None
                    else "::change_request has no action= (insert, delete or replace).",
                    d,
                )
            )
            continue
        has = {key: has_value(d, key) for key in ("from", "to", "text")}
        if action == "replace":
            ok = has["from"] and has["to"]
            need = "from= and to="
        elif action == "insert":
            ok = has["to"] or has["text"] or _has_body(d)
            need = "to=, text= or a body"
        else:
            ok = has["from"] or has["text"] or _has_body(d)
            need = "from=, text= or a body"
        if not ok:
            out.append(
                diag(
                    "change-request-missing-revision-text",
                    f"::change_request action={action} needs {need}.",
                    d,
                )
            )


@rule(
    scope="document",
    codes=("adr-missing-decision", "adr-missing-owner", "adr-missing-date"),
    reads=("profiles",),
    attrs_of=("decision", "adr"),
)
def check_adr(scan: Scan, profiles: set[str], out: list[Diagnostic]) -> None:
    """Under the ``adr`` profile: the document records a decision, with owner and date."""
    if "adr" not in profiles:
        return
    if not scan.named("decision", "adr"):
        out.append(
            diag(
                "adr-missing-decision",
                "The adr profile expects a ::decision or ::adr block; there is none.",
            )
        )
        return
    for d in scan.checked("decision", "adr"):
        if not has_value(d, "owner"):
            out.append(diag("adr-missing-owner", f"::{d.name} has no owner=.", d))
        if not any(has_value(d, key) for key in ("date", "decided_at", "decidedAt")):
            out.append(diag("adr-missing-date", f"::{d.name} has no date= (or decided_at=).", d))


def _iso_day_or_time(text: str) -> bool:
    text = text.strip()
    if not text:
        return False
    try:
        date.fromisoformat(text)
        return True
    except ValueError:
        pass
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
        return "T" in text or " " in text
    except ValueError:
        return False


LAST_SEEN_KEYS = ("last_seen", "last-seen", "lastSeen")


@rule(
    # Under a memory profile it also reads where each wikilink points (the kind of the
    # block a link names): the engine then remakes the findings (`incremental_rules`).
    scope="cross-block",
    codes=(
        "memory-missing-id",
        "memory-missing-type",
        "memory-invalid-type",
        "memory-invalid-confidence",
        "memory-invalid-last-seen",
        "memory-wikilink-non-memory-target",
    ),
    reads=("profiles", "names", "sites"),
    attrs_of=("memory",),
)
def check_memories(scan: Scan, profiles: set[str], out: list[Diagnostic]) -> None:
    """``::memory`` blocks are records an agent reloads: each needs an id and a known
    type; its confidence and last-seen date, when given, must read as such."""
    for d in scan.checked("memory"):
        if not d.id:
            out.append(diag("memory-missing-id", "::memory has no id=.", d))
        kind = d.raw_attrs.get("type")
        if kind is None or not kind.strip():
            out.append(diag("memory-missing-type", "::memory has no type=.", d))
        elif kind.strip() not in MEMORY_TYPES:
            out.append(
                diag(
                    "memory-invalid-type",
                    f'::memory type="{kind}" is not one of {", ".join(MEMORY_TYPES)}.',
                    d,
                )
            )
        if "confidence" in d.raw_attrs and not _unit_number(d.attrs.get("confidence")):
            out.append(
                diag(
                    "memory-invalid-confidence",
                    f'::memory confidence="{d.raw_attrs["confidence"]}" is not a number '
                    "from 0 to 1.",
                    d,
                )
            )
        for key in LAST_SEEN_KEYS:
            raw = d.raw_attrs.get(key)
            if raw is not None and not _iso_day_or_time(raw):
                out.append(
                    diag(
                        "memory-invalid-last-seen",
                        f'::memory {key}="{raw}" is not an ISO date or date-time.',
                        d,
                    )
                )
    if profiles & MEMORY_PROFILES:
        _check_memory_links(scan, out)


def _check_memory_links(scan: Scan, out: list[Diagnostic]) -> None:
    """In a memory document, a wikilink points at another memory (a link to a heading or
    another block kind is a link the memory store cannot follow)."""
    idx = scan.index
    for text, first_line, owner in zip(
        scan.site_texts, scan.site_lines, scan.site_owners, strict=True
    ):
        plain = _blank_code_spans(text) if "`" in text else text
        for match in WIKILINK.finditer(plain):
            ref = match.group(1).strip()
            target = idx.resolve(ref) if ref else None
            if target is None:
                continue  # broken-reference's finding, not this one
            node = idx.first.get(target)
            if isinstance(node, Directive) and node.name == "memory":
                continue
            out.append(
                diag(
                    "memory-wikilink-non-memory-target",
                    f"Wikilink [[{ref}]] points at {target}, which is not a ::memory block.",
                    line=first_line + plain.count("\n", 0, match.start()),
                    node_id=owner,
                )
            )
