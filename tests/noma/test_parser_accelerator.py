"""The optional compiled parser (setup.py, the last section of `core.noma.parser`).

The compiled copy must give exactly what the pure parser gives (tree, spans, ids,
aliases, notes, attribute problems) on the conformance corpus, the demo workspace,
generated documents and hypothesis texts; the incremental re-parse (which drives
`_Parser` itself) must agree too. It must never stand in for sources it was not built
from, and ``NOMA_PURE_PYTHON`` must turn it off.

Where no accelerator was built (no C compiler here), the comparisons skip and say so;
``NOMA_REQUIRE_ACCEL=1`` (CI, where one can be built) makes that a failure. The tests of
the guard and of the build's fallback run everywhere.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_incremental_properties import LINES, line_edit, snapshot
from test_trust_properties import SEEDS, TRIED, corpus, mutated_corpus, noma_text, run

import core.noma.incremental as incremental
import core.noma.parser as parser
from bench.generate import generate
from core.noma.nodes import Document
from core.noma.source import split_lines
from tests.conftest import REPO

PACKAGE = Path(parser.__file__).resolve().parent


def _native_module() -> ModuleType:
    """The compiled copy in use, or skip (fail under NOMA_REQUIRE_ACCEL=1) saying why."""
    if not parser.ACCELERATED:
        message = f"no compiled parser in use: {parser.ACCELERATOR}"
        if os.environ.get("NOMA_REQUIRE_ACCEL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return importlib.import_module("core.noma._parser_native")


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return _native_module()


PURE_PARSE: Callable[..., Document] = parser.PURE["parse"]


def same(native: ModuleType, text: str | bytes, chapter: str | None = None) -> None:
    expected = snapshot(PURE_PARSE(text, chapter=chapter))
    got = snapshot(native.parse(text, chapter=chapter))
    assert got == expected


# -- the switch ----------------------------------------------------------------------------


def test_the_module_says_what_it_runs() -> None:
    compiled = parser.parse is not parser.PURE["parse"]
    assert parser.ACCELERATED is compiled
    assert parser.ACCELERATOR.startswith("compiled" if compiled else "pure Python")
    for name in parser.ACCELERATED_NAMES:
        assert (getattr(parser, name) is parser.PURE[name]) is not compiled, name


def test_importers_get_the_accelerated_names(native: ModuleType) -> None:
    import core.noma as noma

    assert noma.parse is native.parse and noma.parse_source is native.parse_source
    assert incremental._Parser is native._Parser and incremental.parse is native.parse
    assert type(PURE_PARSE) is not type(native.parse)  # a Python function vs a builtin


# -- identical results ---------------------------------------------------------------------


def test_corpus_and_demo_parse_the_same(native: ModuleType) -> None:
    docs = corpus()
    assert len(docs) > 10
    for data in docs:
        same(native, data)
        same(native, data, chapter="ch")  # book mode: scoped ids, the chapter alias
        text = data.decode("utf-8", "replace")
        same(native, text)


@pytest.mark.parametrize(("n", "seed"), [(1, 0), (12, 3), (60, 11), (1000, 7)])
def test_generated_documents_parse_the_same(native: ModuleType, n: int, seed: int) -> None:
    same(native, generate(n, seed=seed))


def test_native_parse_is_not_the_pure_one_in_disguise(native: ModuleType) -> None:
    """The comparisons above compare two parsers: the compiled one runs native code."""
    assert native.__file__ is not None and native.__file__.endswith(tuple(_so_suffixes()))
    assert native._Parser.__module__ == "core.noma._parser_native"
    assert native._Parser is not parser.PURE["_Parser"]


def _so_suffixes() -> list[str]:
    import importlib.machinery

    return importlib.machinery.EXTENSION_SUFFIXES


@pytest.mark.parametrize("which", SEEDS)
def test_hypothesis_texts_parse_the_same(native: ModuleType, which: int) -> None:
    lines_text = st.lists(st.sampled_from(LINES), max_size=40).map("\n".join)

    @given(
        st.one_of(
            st.binary(max_size=2000),
            noma_text,
            lines_text,
            mutated_corpus(),
        )
    )
    def prop(data: str | bytes) -> None:
        TRIED["accelerator-parse"] += 1
        same(native, data)

    run("accelerator-parse", prop, which)


@pytest.mark.parametrize("which", SEEDS)
def test_table_rows_split_the_same(native: ModuleType, which: int) -> None:
    cells = st.text(alphabet="|`\\ ab-:", max_size=40)

    @given(cells)
    def prop(row: str) -> None:
        TRIED["accelerator-table-rows"] += 1
        line = f"|{row}|"
        assert native.split_table_row(line) == parser.PURE["split_table_row"](line)
        assert native.code_spans(row) == parser.PURE["code_spans"](row)

    run("accelerator-table-rows", prop, which)


def test_block_start_and_parser_state_agree(native: ModuleType) -> None:
    """`_Parser` used directly, as `core.noma.incremental` and the block-start tests do."""
    text = "\n".join(LINES) + "\n::a\n| x | y |\n|---|---|\n# T {a=1 a=2}\n"
    lines = split_lines(text)
    pure_parser = parser.PURE["_Parser"](lines, 2, len(lines) - 1)
    fast_parser = native._Parser(lines, 2, len(lines) - 1)

    def answers(p: Any) -> list[object]:
        out: list[object] = []
        for i in range(len(lines)):
            start = p.block_start(i)
            if start is not None and hasattr(start[1], "group"):
                start = (start[0], start[1].group(0))
            out.append(start)
        return out

    assert answers(fast_parser) == answers(pure_parser)
    pure_doc, fast_doc = pure_parser.run(), fast_parser.run()
    assert fast_doc.to_json() == pure_doc.to_json()
    for attr in ("notes", "attr_problems", "directive_colons", "body_start"):
        assert getattr(fast_parser, attr) == getattr(pure_parser, attr), attr
    assert [s.line for s in fast_parser.sections] == [s.line for s in pure_parser.sections]
    assert [d.line for d in fast_parser.directives] == [d.line for d in pure_parser.directives]


@pytest.mark.parametrize("which", SEEDS)
def test_incremental_reparse_agrees_with_either_parser(
    native: ModuleType, which: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A splice parses its region with `_Parser`: the compiled and pure classes give the
    same spliced tree, and both equal a fresh pure parse."""

    def pure_reparse(old: Document, old_text: str, new_text: str) -> Document:
        with monkeypatch.context() as m:
            m.setattr(incremental, "_Parser", parser.PURE["_Parser"])
            m.setattr(incremental, "parse", PURE_PARSE)
            return incremental.reparse(old, old_text, new_text)

    @given(st.data())
    def prop(data: st.DataObject) -> None:
        TRIED["accelerator-incremental"] += 1
        text = generate(data.draw(st.integers(1, 10)), seed=data.draw(st.integers(0, 30)))
        fast_doc, pure_doc = native.parse(text), PURE_PARSE(text)
        for _ in range(data.draw(st.integers(1, 4))):
            new_text = data.draw(line_edit(text))
            fast_doc = incremental.reparse(fast_doc, text, new_text)
            pure_doc = pure_reparse(pure_doc, text, new_text)
            expected = snapshot(PURE_PARSE(new_text))
            assert snapshot(fast_doc) == expected
            assert snapshot(pure_doc) == expected
            text = new_text

    run("accelerator-incremental", prop, which, examples=60)


# -- never a stale accelerator ---------------------------------------------------------------


def _copy_sources(dest: Path) -> Path:
    for name in parser.NATIVE_SOURCES:
        shutil.copyfile(PACKAGE / name, dest / name)
    return dest


@pytest.mark.parametrize("edited", ["parser.py", "attrs.py"])
def test_an_edited_source_turns_the_accelerator_off(
    native: ModuleType, tmp_path: Path, edited: str
) -> None:
    folder = _copy_sources(tmp_path)
    assert parser.load_accelerator(str(folder))[0] is native  # the very sources it was built from
    with (folder / edited).open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    module, why = parser.load_accelerator(str(folder))
    assert module is None
    assert "stale" in why


def test_unreadable_sources_turn_the_accelerator_off(tmp_path: Path) -> None:
    module, why = parser.load_accelerator(str(tmp_path))  # no parser.py there
    assert module is None and why.startswith("pure Python")


def test_a_stale_build_is_not_used_when_the_package_loads(
    native: ModuleType, tmp_path: Path
) -> None:
    """End to end: a copy of the package (its built extension included) whose parser.py
    was edited after the build imports with the pure parser, and says why."""
    shutil.copytree(REPO / "core", tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__"))
    parser_py = tmp_path / "core" / "noma" / "parser.py"
    parser_py.write_text(parser_py.read_text(encoding="utf-8") + "\n# edited\n", "utf-8")
    report = _probe(tmp_path, {})
    assert report["accelerated"] is False and "stale" in report["why"]
    assert report["parse_is_pure"] is True
    assert report["native_file"].startswith(str(tmp_path))  # the copy's extension was found

    parser_py.write_text((PACKAGE / "parser.py").read_text(encoding="utf-8"), "utf-8")
    report = _probe(tmp_path, {})
    assert report["accelerated"] is True and report["parse_is_pure"] is False

    # A build that does not load here (another platform's, a truncated file) is no error.
    built = Path(report["native_file"])
    built.write_bytes(b"not a shared object")
    report = _probe(tmp_path, {})
    assert report["accelerated"] is False and "does not load" in report["why"]
    assert report["parse_is_pure"] is True


def test_pure_python_env_var_gives_the_pure_parser(tmp_path: Path) -> None:
    report = _probe(REPO, {"NOMA_PURE_PYTHON": "1"})
    assert report["accelerated"] is False
    assert report["parse_is_pure"] is True
    assert "NOMA_PURE_PYTHON" in report["why"]
    if parser.ACCELERATED:  # and "0" means not set
        assert _probe(REPO, {"NOMA_PURE_PYTHON": "0"})["accelerated"] is True


PROBE = """
import importlib, json, types
import core.noma.parser as p
try:
    native_file = importlib.import_module("core.noma._parser_native").__file__
except ImportError:
    native_file = ""
assert p.parse(b"# T\\n").children[0].title == "T"
print(json.dumps({
    "accelerated": p.ACCELERATED,
    "why": p.ACCELERATOR,
    "parse_is_pure": isinstance(p.parse, types.FunctionType),
    "native_file": native_file,
}))
"""


def _probe(root: Path, extra_env: dict[str, str]) -> dict[str, Any]:
    import json

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NOMA_PURE_PYTHON")}
    env.update(extra_env)
    env["PYTHONPATH"] = str(root)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


# -- the build ---------------------------------------------------------------------------------


def _setup_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("noma_setup", REPO / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines, does not run setup()
    return module


def test_the_generated_copy_records_what_the_loader_checks(tmp_path: Path) -> None:
    setup = _setup_module()
    native_parser, native_attrs = setup.generate(tmp_path / "tree")
    text = native_parser.read_text(encoding="utf-8")
    assert "from ._attrs_native import " in text and "from .attrs import" not in text
    assert "load_accelerator" not in text  # the loader section is not compiled
    namespace: dict[str, Any] = {}
    exec(text.rsplit("\nSOURCE_DIGESTS = ", 1)[1].join(["digests = ", ""]), namespace)
    assert namespace["digests"] == parser.source_digests(str(PACKAGE))
    assert native_attrs.read_text(encoding="utf-8").endswith(
        (PACKAGE / "attrs.py").read_text(encoding="utf-8")
    )
    assert not list(PACKAGE.glob("_*_native.py"))  # nothing generated in the source tree


def test_a_build_without_a_compiler_installs_pure_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """mypyc writes the C code, the compiler is missing: the build goes on without it."""
    pytest.importorskip("mypyc.build", reason="mypyc (the dev extra's mypy) is not installed")
    from setuptools import Distribution

    setup = _setup_module()
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("LDSHARED", str(tmp_path / "no-such-cc") + " -shared")
    monkeypatch.delenv("NOMA_PURE_PYTHON", raising=False)
    dist = Distribution(
        {
            "name": "probe",
            "ext_modules": setup.placeholder(),
            "cmdclass": {"build_ext": setup.OptionalBuildExt},
        }
    )
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(tmp_path / "lib")
    # What an earlier build of the checkout left in build/lib: it must not ship now.
    left = tmp_path / "lib" / "core" / "noma" / f"_parser_native{_so_suffixes()[0]}"
    left.parent.mkdir(parents=True)
    left.write_bytes(b"stale")
    cmd.build_temp = str(tmp_path / "temp")
    cmd.ensure_finalized()
    assert cmd.extensions  # mypyc generated the C code
    cmd.run()  # and the compiler failing does not fail the build
    assert cmd.extensions == [] and cmd.get_outputs() == []
    assert not list(tmp_path.rglob("*.so"))
    assert "noma accelerator: not built" in capfd.readouterr().err


def test_a_pure_build_asks_for_no_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _setup_module()
    monkeypatch.setenv("NOMA_PURE_PYTHON", "1")
    assert setup.placeholder() == []
    monkeypatch.setenv("NOMA_PURE_PYTHON", "0")
    assert len(setup.placeholder()) == 1


def test_version_names_the_parser_in_use(capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("noma ") and f"(parser: {parser.ACCELERATOR})" in out
