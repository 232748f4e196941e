"""Shortcuts of the cold parse, each held to what it replaced.

The parser reads plain attribute groups without regular expressions (`plain_attrs`),
numbers without one (`coerce`) and directive openers without one (`opener_parts`); the
regexes stay the definition, so each must agree with them on every text it accepts, and
say None (or ask the regex) rather than guess on every text it does not.
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

from bench.generate import generate
from core.noma import attrs, parser
from core.noma.attrs import _ATTR, _NUMBER, _STRICT_GROUP, Attrs, _collect, plain_attrs
from core.noma.ids import blocks_in, index
from core.noma.nodes import Document, Node

# The pure module, and the compiled copy the parser calls when one is in use (the parser's
# accelerator tests say when it must be).
MODULES: list[ModuleType] = [attrs]
OPENER_READERS = [parser.PURE["opener_parts"]]
if parser.ACCELERATED:
    MODULES.append(importlib.import_module("core.noma._attrs_native"))
    OPENER_READERS.append(importlib.import_module("core.noma._parser_native").opener_parts)


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


def test_the_part_memo_stays_bounded_and_agrees() -> None:
    """`plain_attrs` remembers the parts between quotes it read (bare tokens, the key of
    the quoted value that follows); a document of distinct parts must not grow that table
    past its bound, and a part read from the table gives what reading it afresh gives, in
    either place (before a quote or after the last one)."""
    for module in MODULES:
        for k in range(3 * attrs.PART_MEMO_SIZE):
            group = f'id="c{k}" n{k}=0.{k} f{k} q{k}="v" z{k}'
            assert module.read_attrs(group) == by_regex(group)
            assert len(module._PARTS) <= attrs.PART_MEMO_SIZE
        for group in (
            'id="c1" confidence=0.50 draft for="c2" n=007 t=true',
            'id="c1" confidence=0.50 draft for="c2" n=007 t=true',  # remembered now
            ' confidence=0.50 draft for="c2"',
            " confidence=0.50 draft for=",  # the same part after the last quote: not plain
            'a="x" for=',
            'a="" ',
            '"x"',  # an empty part before a quote: not plain
            "",
        ):
            assert module.read_attrs(group) == by_regex(group), group


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
    block list; it must be what a walk of the finished tree finds, in the same order. The
    blocks it gave aliases and the ids it lists beside the blocks (what the index reads)
    must be the walk's too, and the index must be the one a loop over the walk's blocks
    builds."""
    for parse in (parser.parse, parser.PURE["parse"]):
        doc = parse(text)
        assert doc._id_nodes is not None
        walked = blocks_in(doc.children)
        assert [id(n) for n in doc._id_nodes] == [id(n) for n in walked]
        assert doc._aliased is not None
        assert [id(n) for n in doc._aliased] == [id(n) for n in walked if n.aliases]
        assert doc._id_names == [n.id for n in walked]
        _index_is_the_loops(doc, walked)


def _index_is_the_loops(doc: Document, walked: list[Node]) -> None:
    """`index` (one C-level map, entries and counts made when read) against the loop it
    replaced: entries in order, first block per id, counts, alias owners."""
    entries = [(n.id, n) for n in walked if n.id is not None]
    first: dict[str, Node] = {}
    count: dict[str, int] = {}
    owner: dict[str, str] = {}
    for ident, node in entries:
        first.setdefault(ident, node)
        count[ident] = count.get(ident, 0) + 1
        for alias in node.aliases:
            owner.setdefault(alias, ident)
    idx = index(doc)
    assert idx.unique == (len(first) == len(entries))
    assert [(i, id(n)) for i, n in idx.entries] == [(i, id(n)) for i, n in entries]
    assert {i: id(n) for i, n in idx.first.items()} == {i: id(n) for i, n in first.items()}
    assert list(idx.first) == list(first)
    assert idx.count == count
    assert idx.alias_owner == owner


def test_the_parsers_block_list_is_the_walks_on_the_corpus() -> None:
    texts = corpus()
    assert len(texts) > 20
    for text in texts:
        _blocks_agree(text)


@settings(max_examples=300, deadline=None)
@given(noma_text)
def test_the_parsers_block_list_is_the_walks(text: str) -> None:
    _blocks_agree(text)


def opener_by_regex(line: str) -> tuple[int, str, str | None] | None:
    """What the parser read from an opener line before `opener_parts`: `OPENER`'s groups."""
    m = parser.OPENER.match(line)
    return None if m is None else (len(m[1]), m[2], m[3])


# Colons, braces, both quotes, blanks and name characters, ASCII or not (``\w`` takes a
# Unicode letter or digit where the plain path takes ASCII only).
OPENER_TEXT = st.text(
    alphabet=st.sampled_from(list(":{}\"' \t=aZ09._-\u00e9\u0663\r")), max_size=24
)


@st.composite
def opener_lines(draw: st.DrawFn) -> str:
    """A name (ASCII or not, namespaced or not), then maybe a group of any text in braces,
    then maybe blanks: near misses of the opener shape as well as openers."""
    name = draw(st.text(alphabet=st.sampled_from(list("aZ09._-:\u00e9 ")), min_size=1, max_size=8))
    line = draw(st.sampled_from(["::", ":::"])) + name
    if draw(st.booleans()):
        line += "{" + draw(GROUP_TEXT) + draw(st.sampled_from(["}", "", "}}", "} x"]))
    return line + draw(st.sampled_from(["", " ", "\t ", "\r"]))


@settings(max_examples=2000, deadline=None)
@given(opener_lines() | st.builds(str.__add__, st.sampled_from(["::", ":::", ":"]), OPENER_TEXT))
@example("::claim")
@example('::claim{id="c1" confidence=0.5}')
@example(':::note{t="a}b"}  ')  # a brace inside quotes
@example('::note{t="a"} {b}')  # a brace outside them
@example("::acme::widget{a=1}")  # a namespaced name: left to the regex
@example("::caf\u00e9")  # a non-ASCII name: left to the regex
@example("::a{x='}'}")  # single quotes: left to the regex
@example("::Z{'}")  # an unpaired single quote: not an opener
@example("::a {x=1}")  # a blank before the group: not an opener
@example("::a{x=1}\r")
@example("::_a")
@example("::a.b-c_d")
def test_openers_are_read_as_the_regex_reads_them(line: str) -> None:
    want = opener_by_regex(line)
    for read in OPENER_READERS:
        assert read(line) == want, (read.__module__, line)


def test_the_generated_documents_openers_take_the_plain_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every opener of a generated document is read without the regex (the pure reader,
    with `OPENER` replaced by one that fails the test when asked)."""

    class Refuse:
        def match(self, line: str) -> None:
            raise AssertionError(f"the regex was asked about {line!r}")

    lines = generate(200).split("\n")
    openers = [x for x in lines if x.startswith("::") and x.strip(": \t")]
    want = [opener_by_regex(x) for x in openers]
    assert len(openers) > 300 and None not in want
    monkeypatch.setattr(parser, "OPENER", Refuse())
    assert [parser.PURE["opener_parts"](x) for x in openers] == want
