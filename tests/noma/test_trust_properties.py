"""Property tests (hypothesis) for the engine's promises.

- parse never raises, on arbitrary bytes, on Noma-shaped text and on mutations of the
  conformance corpus;
- render -> parse keeps the tree for every document the parser read without recovery;
- a random op list on a corpus document is either applied (the result has no new recovery
  notes, validates, and every record is schema-valid) or rejected with zero bytes changed;
- a list whose last op fails changes nothing;
- an op the engine accepts is valid under ``patch-op.schema.json``.

Each property runs twice in CI: with a fixed seed, and with a random one that a failure
prints (rerun with ``NOMA_PROPERTY_SEED=<seed>``). ``NOMA_PROPERTY_EXAMPLES`` scales the
number of cases (default 150 per property and seed).
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from trust_testlib import op_validator, record_validator, schema_errors, transcript_records

from core.noma.parser import parse
from core.noma.patch import PatchError
from core.noma.patch.catalog import check_op
from core.noma.patch.models import ID_PATTERN, KEY_PATTERN, MODELS
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from core.noma.render import render_noma, structure
from core.noma.validate import validate
from tests.conftest import shared_dir

FIXED_SEED = 20261122
RANDOM_SEED = int(os.environ.get("NOMA_PROPERTY_SEED", random.SystemRandom().randrange(2**31)))
EXAMPLES = int(os.environ.get("NOMA_PROPERTY_EXAMPLES", "150"))
SEEDS = [pytest.param(FIXED_SEED, id="fixed-seed"), pytest.param(RANDOM_SEED, id="random-seed")]
TRIED: dict[str, int] = {}


def run(name: str, test: Callable[..., None], which: int, examples: int = EXAMPLES) -> None:
    """Run a @given test under ``which`` seed; on failure say how to reproduce it."""
    TRIED.setdefault(name, 0)
    configured = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(seed(which)(test))
    try:
        configured()
    except BaseException as exc:
        raise AssertionError(
            f"property {name!r} failed with seed {which}; reproduce with NOMA_PROPERTY_SEED={which}"
        ) from exc


def corpus() -> list[bytes]:
    files = sorted(shared_dir("conformance").rglob("*.noma"))
    demo = sorted(
        (Path(__file__).resolve().parents[2] / "noma_tui" / "demo_workspace").glob("*.noma")
    )
    return [p.read_bytes() for p in [*files, *demo]]


# -- strategies ---------------------------------------------------------------------------

FRAGMENTS = [
    "::",
    ":::",
    "::::",
    "::claim",
    "::note{",
    "::table",
    "::dataset",
    "::comment",
    "{",
    "}",
    'id="x"',
    "id='y'",
    "k=1",
    "flag",
    '"',
    "'",
    "```",
    "```py",
    "#",
    "## ",
    "# {}",
    "|",
    "| a |",
    "| --- |",
    "---",
    "- ",
    "1. ",
    "> ",
    "[[x]]",
    "[[",
    "]]",
    "`",
    "\\|",
    "\t",
    " ",
    "\r",
    "\r\n",
    "\n",
    "\n\n",
    "text",
    "é",
    "日本",
    "\ufeff",
    "\x00",
    "aliases: [a]",
    "a: &a [*a]",
]
noma_text = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)


@st.composite
def mutated_corpus(draw: st.DrawFn) -> bytes:
    docs = corpus()
    data = bytearray(draw(st.sampled_from(docs)))
    for _ in range(draw(st.integers(0, 4))):
        pos = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(FRAGMENTS)).encode("utf-8")
        if kind == "insert":
            data[pos:pos] = piece
        elif kind == "delete":
            data[pos : pos + draw(st.integers(1, 20))] = b""
        else:
            data[pos : pos + len(piece)] = piece
    return bytes(data)


# -- parse never raises ------------------------------------------------------------------


@pytest.mark.parametrize("which", SEEDS)
def test_parse_never_raises_on_arbitrary_bytes(which: int) -> None:
    @given(st.one_of(st.binary(max_size=3000), noma_text.map(lambda t: t.encode("utf-8"))))
    def prop(data: bytes) -> None:
        TRIED["parse-bytes"] = TRIED.get("parse-bytes", 0) + 1
        doc = parse(data)
        validate(doc)
        doc.to_json()

    run("parse-bytes", prop, which)


@pytest.mark.parametrize("which", SEEDS)
def test_parse_never_raises_on_mutations_of_the_corpus(which: int) -> None:
    @given(mutated_corpus())
    def prop(data: bytes) -> None:
        TRIED["parse-mutations"] = TRIED.get("parse-mutations", 0) + 1
        doc = parse(data)
        validate(doc)
        render_noma(doc)

    run("parse-mutations", prop, which)


# -- render -> parse ---------------------------------------------------------------------


@pytest.mark.parametrize("which", SEEDS)
def test_render_then_parse_keeps_the_tree_without_recovery(which: int) -> None:
    @given(st.one_of(noma_text.map(lambda t: t.encode("utf-8")), mutated_corpus()))
    def prop(data: bytes) -> None:
        doc = parse(data)
        if doc.notes:
            return  # recovered documents promise nothing about their normal form
        TRIED["roundtrip"] = TRIED.get("roundtrip", 0) + 1
        again = parse(render_noma(doc))
        assert structure(again) == structure(doc)

    run("roundtrip", prop, which)


# -- op lists on corpus documents ---------------------------------------------------------

HOSTILE = [
    "x",
    "",
    "a b",
    "plain",
    "Value 2",
    "ok",
    '"}\n::evil{id="e"}\n::\n',
    "a\nb",
    "line\r",
    "`",
    "``a``",
    "|",
    "\\|",
    "::",
    ":::x",
    "```",
    "# h",
    "{x}",
    "it's",
    'say "hi"',
    "日本",
    "\t",
    "\x00",
    "\u2028",
    "9",
    "-3",
    "true",
    "1e3",
]


def _ids(text: bytes) -> dict[str, list[str]]:
    """The document's ids by kind, so most generated ops address a block they fit."""
    from core.noma.nodes import Directive, Section

    kinds: dict[str, list[str]] = {
        k: [] for k in ("any", "directive", "section", "table", "dataset", "comment", "parent")
    }
    for node, _ in parse(text).walk():
        if not node.id:
            continue
        kinds["any"].append(node.id)
        if isinstance(node, Section):
            kinds["section"].append(node.id)
            if not node.in_directive:
                kinds["parent"].append(node.id)
        elif isinstance(node, Directive):
            kinds["directive"].append(node.id)
            kinds["parent"].append(node.id)
            if node.name in ("table", "dataset", "comment"):
                kinds[node.name].append(node.id)
    return {k: v or ["missing"] for k, v in kinds.items()}


def _kind(prop: dict[str, Any]) -> str:
    """A generator kind for one field of an op model's JSON schema."""
    options = [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]
    types = {o.get("type") for o in options}
    if len(options) > 2 or "boolean" in types:
        return "attr"
    if types == {"integer", "string"}:
        return "col"
    only = options[0]
    if only.get("pattern") == ID_PATTERN:
        return "id"
    if only.get("pattern") == KEY_PATTERN:
        return "key"
    if "enum" in only:
        return "action"
    if only.get("type") == "array":
        return "cells"
    if only.get("type") == "integer":
        return "int>=0"
    return "str+" if only.get("minLength") == 1 else "str"


def _op_fields() -> dict[str, tuple[dict[str, str], frozenset[str]]]:
    """Each op's fields and their generator kinds, read from the typed models."""
    out = {}
    for name, model in MODELS.items():
        schema = model.model_json_schema(by_alias=True)
        fields = {
            key: _kind(prop)
            for key, prop in schema["properties"].items()
            if key not in ("op", "baseHash")
        }
        out[name] = (fields, frozenset(schema.get("required", [])) - {"op"})
    return out


OP_FIELDS = _op_fields()
NEW_ID_OPS = frozenset({"add_comment", "add_footnote", "add_endnote", "add_change_request"})


def _field_kind(name: str, key: str) -> str:
    if key == "id" and name in NEW_ID_OPS:
        return "new"
    if key in ("to",) and name == "rename_id":
        return "new"
    if key in ("target",):
        return "any"
    if key == "parent":
        return "parent"
    if name == "update_heading":
        return "section"
    if "table" in name:
        return "table"
    if "dataset" in name:
        return "dataset"
    if name == "resolve_comment":
        return "comment"
    return "directive"


@st.composite
def op_for(draw: st.DrawFn, ids: dict[str, list[str]] | list[str]) -> dict[str, Any]:
    by_kind = ids if isinstance(ids, dict) else {"any": ids}
    fits = [
        n
        for n in sorted(OP_FIELDS)
        if by_kind.get(_field_kind(n, "from" if n == "rename_id" else "id"), ["x"]) != ["missing"]
    ]
    # Mostly ops that fit a block the document has; sometimes any op at all.
    name = draw(st.sampled_from((fits or sorted(OP_FIELDS)) * 5 + sorted(OP_FIELDS)))
    fields, required = OP_FIELDS[name]
    op: dict[str, Any] = {"op": name}

    def ident_for(key: str) -> st.SearchStrategy[str]:
        kind = _field_kind(name, key)
        if kind == "new":
            fitting = ["new-id", "n_7", "fresh.1"]
        else:
            fitting = by_kind.get(kind, by_kind["any"])
        anything = [*by_kind["any"], "new-id", "other_9"]
        return st.sampled_from(fitting * 6 + anything)

    kinds: dict[str, st.SearchStrategy[Any]] = {
        "id": st.just("placeholder"),
        "str": st.sampled_from(HOSTILE),
        "str+": st.sampled_from([h for h in HOSTILE if h]),
        "int>=0": st.integers(0, 4),
        "col": st.one_of(st.integers(0, 3), st.sampled_from(["a", "b", "Vertical", "x"])),
        "key": st.sampled_from(["a", "status", "for", "confidence", "owner"]),
        "attr": st.one_of(st.sampled_from(HOSTILE), st.integers(-5, 5), st.booleans(), st.none()),
        "cells": st.lists(st.sampled_from(HOSTILE), max_size=3),
        "action": st.sampled_from(["insert", "delete", "replace"]),
    }
    for key, kind in fields.items():
        if key in required or draw(st.booleans()):
            if key == "content":
                op[key] = draw(
                    st.sampled_from(
                        [
                            '::note{id="n9"}\nbody\n::',
                            ":::tip\nx\n:::",
                            "plain text",
                            '::note{id="n8"}\n```\n::',
                            'line\n::\n::evil{id="e"}',
                            ':::child{id="c9"}\nx\n:::',
                            "",
                        ]
                    )
                )
            elif kind == "id":
                op[key] = draw(ident_for(key))
            else:
                op[key] = draw(kinds[kind])
    return op


@st.composite
def doc_and_ops(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]]]:
    docs = [d for d in corpus() if not parse(d).notes]
    data = draw(st.sampled_from(docs))
    ops = draw(st.lists(op_for(_ids(data)), min_size=1, max_size=2))
    return data, ops


def _patch(data: bytes, ops: list[dict[str, Any]]) -> tuple[Any, bytes, Path, Path]:
    folder = Path(tempfile.mkdtemp(prefix="noma-prop-"))
    path = folder / "doc.noma"
    path.write_bytes(data)
    outcome = patch_file(path, PatchRequest(ops=ops, actor=Actor("agent", "fuzz")))
    return outcome, path.read_bytes(), path, folder


@pytest.mark.long(15)
@pytest.mark.parametrize("which", SEEDS)
def test_random_op_lists_apply_cleanly_or_change_nothing(which: int) -> None:
    validator = record_validator()

    @given(doc_and_ops())
    def prop(case: tuple[bytes, list[dict[str, Any]]]) -> None:
        data, ops = case
        TRIED["op-lists"] = TRIED.get("op-lists", 0) + 1
        outcome, after, path, folder = _patch(data, ops)
        try:
            records = transcript_records(path)
            for rec in records:
                assert schema_errors(validator, rec) == [], rec
            if outcome.ok:
                TRIED["op-lists-applied"] = TRIED.get("op-lists-applied", 0) + 1
                before_notes = len(parse(data).notes)
                post = parse(after)
                assert len(post.notes) <= before_notes, post.notes
                validate(post)
                assert len(records) == len(ops)
            else:
                assert after == data, "a rejected list changed the document"
                assert all(r["patch_result"] == "rejected" for r in records)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    run("op-lists", prop, which, examples=EXAMPLES * 2)


@pytest.mark.parametrize("which", SEEDS)
def test_a_list_whose_last_op_fails_changes_nothing(which: int) -> None:
    @given(doc_and_ops())
    def prop(case: tuple[bytes, list[dict[str, Any]]]) -> None:
        data, ops = case
        TRIED["failing-last"] = TRIED.get("failing-last", 0) + 1
        failing = {"op": "delete_block", "id": "surely-not-an-id"}
        outcome, after, path, folder = _patch(data, [*ops, failing])
        try:
            assert not outcome.ok
            assert after == data
            records = transcript_records(path)
            assert all(r["patch_result"] == "rejected" for r in records)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    run("failing-last", prop, which, examples=max(EXAMPLES // 3, 20))


# -- the engine's wire check agrees with the official op schema ---------------------------


@pytest.mark.parametrize("which", SEEDS)
def test_every_op_the_engine_accepts_is_schema_valid(which: int) -> None:
    validator = op_validator()
    junk = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.floats(allow_nan=True),
        st.text(max_size=6),
        st.lists(st.integers(), max_size=2),
    )

    @given(
        op_for(["c1", "k1", "t1", "bad id", "1x", ""]),
        st.dictionaries(
            st.sampled_from(["id", "key", "value", "position", "row", "extra", "baseHash"]),
            junk,
            max_size=2,
        ),
    )
    def prop(op: dict[str, Any], noise: dict[str, Any]) -> None:
        TRIED["wire-schema"] = TRIED.get("wire-schema", 0) + 1
        candidate = {**op, **noise}
        try:
            check_op(candidate)
        except PatchError:
            return
        if candidate.get("op") == "update_attribute" and candidate.get("value") is None:
            return  # the spec's null form: recorded as remove_attribute (canonical_op)
        assert [e.message for e in validator.iter_errors(candidate)] == [], candidate

    run("wire-schema", prop, which)


def test_zz_report_cases_tried(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints how many cases each property tried in this run (shown with ``-s``)."""
    with capsys.disabled():
        print(
            "\nproperty cases tried:", dict(sorted(TRIED.items())), f"(random seed {RANDOM_SEED})"
        )
    assert all(v > 0 for v in TRIED.values())


@pytest.mark.parametrize("data", [b"\r\n\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbfhello\n"])
def test_a_first_block_starting_with_a_bom_character_survives_render(data: bytes) -> None:
    """Found by the round-trip property (seed 1921271967): a paragraph holding U+FEFF came
    back first in the rendered text, where a reader takes it for the byte-order mark."""
    doc = parse(data)
    assert not doc.notes and doc.children
    assert structure(parse(render_noma(doc))) == structure(doc)
