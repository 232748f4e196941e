"""`slugify`'s ASCII path (translate + split) against the regex definition it replaces."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from core.noma.slug import slugify

_DROP = re.compile(r"[^a-z0-9\s-]")
_COLLAPSE = re.compile(r"[\s-]+")
_WORD = re.compile(r"[^\W_]+")


def slugify_by_definition(title: str) -> str:
    lowered = title.lower()
    folded = "".join(
        ch for ch in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(ch)
    )
    slug = _COLLAPSE.sub("-", _DROP.sub("", folded)).strip("-")
    return slug or "-".join(_WORD.findall(lowered))


ASCII_TITLES = st.text(alphabet=st.characters(max_codepoint=127), max_size=40)
MIXED = st.text(
    alphabet=st.sampled_from([*"aZ09 -_\t\x1c\x1f:/.!", "é", "ß", "中", "\u2003", "\xa0", "Ω"]),
    max_size=30,
)


@settings(max_examples=3000, deadline=None)
@given(ASCII_TITLES)
def test_ascii_titles_slug_as_the_definition_says(title: str) -> None:
    assert slugify(title) == slugify_by_definition(title)


@settings(max_examples=1500, deadline=None)
@given(MIXED)
def test_mixed_titles_slug_as_the_definition_says(title: str) -> None:
    assert slugify(title) == slugify_by_definition(title)


def test_examples() -> None:
    assert slugify("Finding 12: Pricing under load") == "finding-12-pricing-under-load"
    assert slugify("  --a -- b--  ") == "a-b"
    assert slugify("Tab\there\x1cand sep") == "tab-here-and-sep"
    assert slugify("Über café") == "uber-cafe"
    assert slugify("中文 标题") == "中文-标题"
    assert slugify("!!!") == ""
