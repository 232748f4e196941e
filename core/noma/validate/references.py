"""Document integrity: ``duplicate-id`` and ``broken-reference`` (§2.1, §4.4).

Heading slugs and directive ids share one id space (the `IdIndex`), and aliases satisfy
references (§2.2). Both rules report one diagnostic per site, so a reader can fix them one
by one: three copies of an id give two errors, five broken links give five.
"""

from __future__ import annotations

import re
from collections.abc import Container

from ..backtick_runs import lazy_spans
from ..diagnostics import Diagnostic
from ..nodes import Directive
from ..scan_facts import (
    REFERENCE_ATTRS,
    REFERENCE_KEYS,
    TARGET_ATTRS,
    TARGET_DIRECTIVES,
    TARGET_KEYS,
    is_noverify,
)
from ..wikilinks import WIKILINK
from .registry import diag
from .rules import rule
from .scan import Scan

__all__ = [
    "REFERENCE_ATTRS",
    "TARGET_ATTRS",
    "WIKILINK",
    "check_broken_references",
    "check_duplicate_ids",
]

# An inline code span (`x`, ``x``): its text is literal, like a code block's. Spans are
# what ``(`+)(?:.|\n)+?\1`` matches, found by `backtick_runs.lazy_spans` in linear time.
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank_code_spans(text: str) -> str:
    """Replace inline code spans by spaces, keeping every offset and newline in place."""
    out: list[str] = []
    pos = 0
    for start, end in lazy_spans(text):  # the pattern's spans, without its backtracking
        out.append(text[pos:start])
        out.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


@rule(
    scope="cross-block",
    codes=("duplicate-id",),
    reads=("names", "noverify"),
    lines_in_message=("duplicate-id",),
)
def check_duplicate_ids(scan: Scan, out: list[Diagnostic]) -> None:
    """Every occurrence after the first of an id is an error (pointing back at the first)."""
    idx = scan.index
    if idx.unique:
        return  # the common case: no id repeats
    count = idx.count
    first = idx.first
    for ident, node in idx.entries:
        if count[ident] < 2 or first[ident] is node:
            continue
        attrs = getattr(node, "attrs", None)
        if attrs and is_noverify(attrs):
            continue
        out.append(
            diag(
                "duplicate-id",
                f'Two or more nodes carry the same canonical id "{ident}" '
                f"(first on line {first[ident].line}).",
                node,
            )
        )


@rule(
    scope="cross-block",
    codes=("broken-reference",),
    reads=("names", "references", "noverify", "sites"),
)
def check_broken_references(scan: Scan, out: list[Diagnostic]) -> None:
    """Reference attributes and wikilinks must name an id or alias of this document."""
    idx = scan.index
    ids, aliases = idx.first, idx.alias_owner
    blocks = scan.ref_blocks  # checked directives with a reference attribute (the walk's)
    # Fast path: every stripped reference value in two comprehensions (the review
    # directives read more keys) and one set difference; only when some value names
    # nothing are the blocks walked again, in order, to report each. (`attr_targets` is
    # kept on the scan: what a splice's reuse must not touch.)
    named = scan.attr_targets = {
        raw.strip()
        for d in blocks
        if d.name not in TARGET_DIRECTIVES
        for key, raw in d.raw_attrs.items()
        if key in REFERENCE_KEYS
    }
    named.update(
        raw.strip()
        for d in blocks
        if d.name in TARGET_DIRECTIVES
        for key, raw in d.raw_attrs.items()
        if key in TARGET_KEYS
    )
    if named.difference(ids, aliases, ("",)):
        _report_attributes(blocks, ids, aliases, out)

    texts = [_blank_code_spans(t) if "`" in t else t for t in scan.site_texts]
    # Fast path: every link target of the document in one regex pass (sites joined by a
    # newline, which no link can span) and one set difference. Only when a target is
    # missing are the sites walked again, one by one, to place each broken link.
    targets = scan.link_targets = set(WIKILINK.findall("\n".join(texts)))
    unknown = targets.difference(ids, aliases)
    if not unknown:
        return
    # Targets written with blanks around them ("[[ a ]]") are only stripped now.
    missing = {ref for ref in map(str.strip, unknown) if ref and ref not in ids}
    missing.difference_update(aliases)
    if not missing:
        return
    for text, first_line, owner in zip(texts, scan.site_lines, scan.site_owners, strict=True):
        _report_wikilinks(text, first_line, owner, missing, out)


def _report_attributes(
    blocks: list[Directive], ids: Container[str], aliases: Container[str], out: list[Diagnostic]
) -> None:
    """One ``broken-reference`` per reference attribute of ``blocks`` naming no id or alias."""
    for d in blocks:
        name = d.name
        keys = TARGET_KEYS if name in TARGET_DIRECTIVES else REFERENCE_KEYS
        for key, raw in d.raw_attrs.items():
            if key not in keys:
                continue
            ref = raw.strip()
            if ref and ref not in ids and ref not in aliases:
                out.append(
                    diag(
                        "broken-reference",
                        f'::{name} {key}="{ref}" points at "{ref}", which is not an id '
                        "or alias in this document.",
                        d,
                    )
                )


def _report_wikilinks(
    text: str, first_line: int, owner: str | None, missing: set[str], out: list[Diagnostic]
) -> None:
    """One ``broken-reference`` per link of ``text`` to a ``missing`` target, on its line."""
    for match in WIKILINK.finditer(text):
        ref = match.group(1).strip()
        if ref not in missing:
            continue
        out.append(
            diag(
                "broken-reference",
                f'Wikilink [[{ref}]] points at "{ref}", which is not an id or alias in '
                "this document.",
                line=first_line + text.count("\n", 0, match.start()),
                node_id=owner,
            )
        )
