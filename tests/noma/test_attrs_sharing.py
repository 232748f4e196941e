"""Attribute dicts of a parsed tree are compact: keys and directive names are interned, and a
group whose values are all their own text keeps one dict for ``attrs`` and ``raw_attrs``."""

from __future__ import annotations

import pytest

from core.noma import parse
from core.noma.attrs import parse_attrs, read_attrs
from core.noma.nodes import Directive
from core.noma.parser import PURE


def _directives(text: str, parser: object = parse) -> list[Directive]:
    doc = parser(text)  # type: ignore[operator]
    return [n for n, _ in doc.walk() if isinstance(n, Directive)]


@pytest.mark.parametrize("parser", [parse, PURE["parse"]], ids=["in-use", "pure"])
def test_string_values_share_one_dict(parser: object) -> None:
    (d,) = _directives('::evidence{id="e1" for="c1" source=bench}\nx\n::\n', parser)
    assert d.attrs == {"id": "e1", "for": "c1", "source": "bench"}
    assert d.raw_attrs is d.attrs


@pytest.mark.parametrize("parser", [parse, PURE["parse"]], ids=["in-use", "pure"])
def test_a_coerced_value_splits_them(parser: object) -> None:
    (d,) = _directives('::claim{id="c1" note=x confidence=0.50 draft strict="false"}\n::\n', parser)
    assert d.attrs == {"id": "c1", "note": "x", "confidence": 0.5, "draft": True, "strict": False}
    assert d.raw_attrs == {
        "id": "c1",
        "note": "x",
        "confidence": "0.50",
        "draft": "",
        "strict": "false",
    }
    assert d.raw_attrs is not d.attrs


def test_no_group_gives_one_empty_dict() -> None:
    (d,) = _directives("::note\nbody\n::\n")
    assert d.attrs == {} and d.raw_attrs is d.attrs


@pytest.mark.parametrize(
    ("group", "values", "raw"),
    [
        ('a="y" a=x', {"a": "x"}, {"a": "x"}),  # the last one wins, still shared
        ("a b=2 a=x", {"a": "x", "b": 2}, {"a": "x", "b": "2"}),
        ("a=x a", {"a": True}, {"a": ""}),
        ('id="007" n=007', {"id": "007", "n": 7}, {"id": "007", "n": "007"}),
    ],
)
def test_repeated_and_mixed_keys(
    group: str, values: dict[str, object], raw: dict[str, str]
) -> None:
    got_values, got_raw = parse_attrs(group)
    assert (got_values, got_raw) == (values, raw)
    assert (got_raw is got_values) == all(isinstance(v, str) for v in values.values())


def test_keys_and_names_are_interned() -> None:
    # Built at run time, so the compiler cannot have folded them into one constant.
    key = "".join(["own", "er"])
    name = "".join(["ri", "sk"])
    text = "".join(f'::{name}{{id="r{i}" {key}="t{i}"}}\nx\n::\n\n' for i in range(3))
    first, *rest = _directives(text)
    for d in rest:
        assert d.name is first.name
        assert next(k for k in d.attrs if k == "owner") is next(
            k for k in first.attrs if k == "owner"
        )
    values, _raw, clean = read_attrs(f'{key}="a"')
    assert clean and next(iter(values)) is next(k for k in first.attrs if k == "owner")
