"""Shortcuts of the cold parse, each held to what it replaced.

The parser reads plain attribute groups without regular expressions (`plain_attrs`) and
numbers without one (`coerce`); the regexes stay the definition, so both must agree with
them on every text they accept, and say None rather than guess on every text they do not.
The id pass takes the parser's block list instead of sorting: it must be the walk's.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_trust_properties import corpus, noma_text

from core.noma import attrs, parser
from core.noma.attrs import _ATTR, _NUMBER, _STRICT_GROUP, Attrs, _collect, plain_attrs
from core.noma.ids import blocks_in

# The pure module, and the compiled copy the parser calls when one is in use (the parser's
# accelerator tests say when it must be).
MODULES: list[ModuleType] = [attrs]
if parser.ACCELERATED:
    MODULES.append(importlib.import_module("core.noma._attrs_native"))


def by_regex(group: str) -> tuple[Attrs, dict[str, str], bool]:
    """What `read_attrs` gave before the plain path: the token regex, then the strict one."""
    found = _ATTR.findall(group)
    values, raw = _collect(found)
    return values, raw, len(raw) == len(found) and _STRICT_GROUP.match(group) is not None


# Characters that matter to the grammar, plus letters, digits, blanks of several kinds and
# a few non-ASCII ones (a Unicode digit, a no-break space, a letter).
GROUP_TEXT = st.text(
    alphabet=st.sampled_from(list("ab =\"'{}\\-.0123456789\t\x1c\u00a0\u0663\u00e9xyz:")),
    max_size=40,
)
WORDS = st.sampled_from(["id", "for", "a", "b", "confidence", "draft", "x-y", "k.1"])
VALUES = st.sampled_from(["c1", "0.5", "-3", "007", "true", "false", "", "a b", "1.2.3", "-"])


@st.composite
def plain_groups(draw: st.DrawFn) -> str:
    """Groups the parser meets every day: ``key="v"``, ``key=v`` and flags, blank-separated."""
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        key, value, form = draw(WORDS), draw(VALUES), draw(st.integers(0, 2))
        if form == 0:
            parts.append(f'{key}="{value}"')
        elif form == 1 and value and " " not in value:
            parts.append(f"{key}={value}")
        else:
            parts.append(key)
    blanks = draw(st.sampled_from([" ", "  ", "\t", " \t "]))
    return draw(st.sampled_from(["", " "])) + blanks.join(parts) + draw(st.sampled_from(["", " "]))


def _typed(values: Mapping[str, object]) -> list[tuple[str, type, object]]:
    return [(key, type(value), value) for key, value in values.items()]


def _agree(group: str) -> bool:
    """Whether the plain path answered; when it did, its answer is the regexes' to the
    letter: values, raw texts, cleanliness, and whether the two dicts are one object."""
    for module in MODULES:
        got = module.plain_attrs(group)
        if got is None:
            continue
        want = by_regex(group)
        assert got == want, (module.__name__, group)
        # ``==`` holds True equal to 1 and 1 to 1.0: the value types must match too.
        assert _typed(got[0]) == _typed(want[0]), (module.__name__, group)
        assert (got[0] is got[1]) == (want[0] is want[1]), (module.__name__, group)
        assert module.read_attrs(group) == want
    return plain_attrs(group) is not None


@settings(max_examples=400, deadline=None)
@given(plain_groups())
def test_plain_groups_take_the_plain_path_and_agree(group: str) -> None:
    assert _agree(group), group


@settings(max_examples=1500, deadline=None)
@given(GROUP_TEXT)
@example('a="x"b')  # text glued to a closing quote
@example('a= "x"')  # a blank between = and the quote
@example('a="x')  # an unpaired quote
@example("a==b")
@example("=b")
@example("a=")
@example('a="x" a=y')  # a repeated key: not clean
@example("a\\b")
@example("a='x'")
@example('t="{x}"')
@example('a="1" b="" c=-2.50 d')
def test_any_group_agrees_or_goes_to_the_regexes(group: str) -> None:
    _agree(group)
    assert attrs.read_attrs(group) == by_regex(group)


@pytest.mark.parametrize(
    "group",
    ['a="x"b', 'a= "x"', 'a="x', "a==b", "=b", "a=", "a='x'", 't="{x}"', "a\\b", 'a ="x"'],
)
def test_what_is_not_plain_is_left_to_the_regexes(group: str) -> None:
    assert plain_attrs(group) is None


@settings(max_examples=1500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("-.0123456789\u0663\u00b2ae ")), max_size=12)
    | st.sampled_from(["true", "false", "-", ".5", "5.", "1.2.3", "--1", "-0", "\u0663.\u0663"])
)
def test_coerce_reads_as_a_number_exactly_what_the_regex_does(value: str) -> None:
    number = value[:1] in "-0123456789" and value[:1] != "" and _NUMBER.match(value)
    for module in MODULES:
        _check_coerce(module.coerce(value), value, bool(number))


def _check_coerce(got: object, value: str, number: bool) -> None:
    if number:
        assert not isinstance(got, str | bool) and got == float(value)
    elif value in ("true", "false"):
        assert got is (value == "true")
    else:
        assert got is value


# -- the parser's block list ---------------------------------------------------------------


def _blocks_agree(text: str | bytes) -> None:
    """The id pass takes the parser's sections-and-directives list as the line-ordered
    block list; it must be what a walk of the finished tree finds, in the same order."""
    for parse in (parser.parse, parser.PURE["parse"]):
        doc = parse(text)
        assert doc._id_nodes is not None
        assert [id(n) for n in doc._id_nodes] == [id(n) for n in blocks_in(doc.children)]


def test_the_parsers_block_list_is_the_walks_on_the_corpus() -> None:
    texts = corpus()
    assert len(texts) > 20
    for text in texts:
        _blocks_agree(text)


@settings(max_examples=300, deadline=None)
@given(noma_text)
def test_the_parsers_block_list_is_the_walks(text: str) -> None:
    _blocks_agree(text)
