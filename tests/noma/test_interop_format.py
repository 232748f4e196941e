"""The format behaviours the reference shows where the spec is silent (issue 13, Build 4):
namespaced directive names, JSON dataset bodies in any array layout, blank lines kept by
delete/move inside a directive parent, and the render normal form of aliases and stray
backslash-quotes. Each has a case that triggers it and one that does not."""

from __future__ import annotations

from core.noma.ids import index
from core.noma.nodes import Directive
from core.noma.parser import parse
from core.noma.patch import apply_ops_to_text
from core.noma.render import render_noma
from core.noma.validate import validate

# -- namespaced directive names ------------------------------------------------------

NS = (
    "# Doc\n\n"
    '::acme::widget{id="widget-1" reviewed-by="kim" aliases="w1"}\n'
    "Body.\n"
    "::\n\n"
    "See [[widget-1]] and [[w1]].\n"
)


def test_namespaced_directive_is_a_directive_with_id_alias_and_unknown_attributes() -> None:
    doc = parse(NS)
    widget = next(n for n, _ in doc.walk() if isinstance(n, Directive))
    assert widget.name == "acme::widget" and widget.id == "widget-1"
    assert widget.attrs["reviewed-by"] == "kim"
    assert (widget.line, widget.end_line) == (3, 5)
    idx = index(doc)
    assert idx.canonical == ["doc", "widget-1"] and idx.alias_owner == {"w1": "widget-1"}
    assert validate(doc) == []  # the links resolve; unknown attributes pass through (§1.3)


def test_namespaced_directive_is_patchable_and_renders_back() -> None:
    out = apply_ops_to_text(
        NS, [{"op": "update_attribute", "id": "widget-1", "key": "status", "value": "ok"}]
    )
    assert '::acme::widget{id="widget-1" reviewed-by="kim" aliases="w1" status="ok"}' in out
    assert render_noma(parse(NS)) == NS


def test_a_lone_name_or_a_trailing_double_colon_is_not_namespaced() -> None:
    plain = parse('::note{id="n"}\nx\n::\n')
    assert [n.name for n, _ in plain.walk() if isinstance(n, Directive)] == ["note"]
    text = parse("::acme::\nx\n")  # no name after the second "::": not an opener
    assert not any(isinstance(n, Directive) for n, _ in text.walk())
