"""The optional compiled renderers: ``render --to noma`` and the Markdown/HTML exports.

setup.py compiles copies of ``render.py`` and of the exporters' hot modules with mypyc
(`core.noma.native_build` decides when they may stand in). The copies must write exactly
the bytes the pure modules write: on the goldens, the conformance corpus and demo
workspace, generated documents and hypothesis texts. They must never stand in for edited
sources, and ``NOMA_PURE_PYTHON`` must turn them off.

Where no compiled copy was built (no C compiler here), the comparisons skip and say so;
``NOMA_REQUIRE_ACCEL=1`` (CI, where one can be built) makes that a failure. The tests of
the guard and of the generated sources run everywhere.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_export_golden import DEMO_DOCS, GOLDEN
from test_trust_properties import SEEDS, TRIED, corpus, mutated_corpus, noma_text, run

import core.noma.render as render
from bench.generate import generate
from core.noma import native_build, parse
from core.noma.export import SUFFIXES, compiled
from core.noma.export import html as pure_html
from core.noma.export import markdown as pure_markdown
from core.noma.files import read_document
from core.noma.nodes import Document
from core.noma.validate import validate
from noma_tui.demo import DEMO_SOURCE
from tests.conftest import REPO

PACKAGE = Path(native_build.__file__).resolve().parent
PURE_RENDER = render.PURE["render_noma"]


class Native:
    """The three compiled entry points in use."""

    def __init__(self) -> None:
        markdown, why_md = compiled.load("markdown")
        page, why_html = compiled.load("html")
        if not render.ACCELERATED or markdown is None or page is None:
            message = f"no compiled renderers in use: {render.ACCELERATOR}; {why_md}; {why_html}"
            if os.environ.get("NOMA_REQUIRE_ACCEL") == "1":
                pytest.fail(message)
            pytest.skip(message)
        self.markdown: ModuleType = markdown
        self.html: ModuleType = page
        self.render: ModuleType = importlib.import_module("core.noma._render_native")


@pytest.fixture(scope="module")
def native() -> Native:
    return Native()


def same(native: Native, doc: Document) -> None:
    assert native.render.render_noma(doc) == PURE_RENDER(doc)
    assert native.markdown.render_markdown(doc) == pure_markdown.render_markdown(doc)
    assert native.html.render_html(doc) == pure_html.render_html(doc)


# -- the switch ----------------------------------------------------------------------------


def test_export_and_render_call_the_compiled_copies(native: Native) -> None:
    assert render.render_noma is native.render.render_noma
    assert compiled.module("markdown") is native.markdown
    assert compiled.module("html") is native.html
    assert native.markdown.__file__ is not None
    assert not native.markdown.__file__.endswith(".py")  # an extension, not the source
    assert native.markdown.render_markdown is not pure_markdown.render_markdown


def test_the_pure_entry_points_stay_reachable() -> None:
    assert PURE_RENDER.__module__ == "core.noma.render"
    assert isinstance(PURE_RENDER, FunctionType)
    assert isinstance(pure_markdown.render_markdown, FunctionType)
    assert isinstance(pure_html.render_html, FunctionType)


# -- identical bytes -------------------------------------------------------------------------


@pytest.mark.parametrize("name", DEMO_DOCS)
def test_goldens_are_written_the_same(native: Native, name: str) -> None:
    path = DEMO_SOURCE / name
    _source, doc = read_document(path)
    diagnostics = validate(doc, base_dir=path.parent)
    stem = GOLDEN / name.removesuffix(".noma")
    golden_md = (stem.parent / (stem.name + SUFFIXES["markdown"])).read_text(encoding="utf-8")
    golden_html = (stem.parent / (stem.name + SUFFIXES["html"])).read_text(encoding="utf-8")
    assert native.markdown.render_markdown(doc) == golden_md
    assert pure_markdown.render_markdown(doc) == golden_md
    assert native.html.render_html(doc, diagnostics) == golden_html
    assert pure_html.render_html(doc, diagnostics) == golden_html
    assert native.render.render_noma(doc) == PURE_RENDER(doc)


def test_corpus_is_written_the_same(native: Native) -> None:
    docs = corpus()
    assert len(docs) > 10
    for data in docs:
        same(native, parse(data))


@pytest.mark.parametrize(("n", "seed"), [(1, 0), (12, 3), (60, 11), (600, 7)])
def test_generated_documents_are_written_the_same(native: Native, n: int, seed: int) -> None:
    same(native, parse(generate(n, seed=seed)))


@pytest.mark.parametrize("which", SEEDS)
def test_hypothesis_documents_are_written_the_same(native: Native, which: int) -> None:
    @given(st.one_of(noma_text, mutated_corpus(), st.binary(max_size=600)))
    def prop(data: str | bytes) -> None:
        TRIED["accelerator-render"] += 1
        same(native, parse(data))

    run("accelerator-render", prop, which)


# -- never a stale copy ------------------------------------------------------------------------


def _copy_sources(dest: Path) -> Path:
    for name in native_build.SOURCES:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGE / name, dest / name)
    return dest


@pytest.mark.parametrize("edited", native_build.SOURCES)
def test_an_edited_source_turns_the_copies_off(native: Native, tmp_path: Path, edited: str) -> None:
    folder = str(_copy_sources(tmp_path))
    for name in ("_render_native", "_export_native.markdown", "_export_native.html"):
        module, why = native_build.load_compiled(name, folder)
        assert module is not None, why  # the very sources they were built from
    with (tmp_path / edited).open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    for name in ("_render_native", "_export_native.markdown", "_export_native.html"):
        module, why = native_build.load_compiled(name, folder)
        assert module is None and "stale" in why


def test_unreadable_sources_or_no_build_turn_the_copies_off(tmp_path: Path) -> None:
    module, why = native_build.load_compiled("_render_native", str(tmp_path))
    assert module is None and why.startswith("pure Python")
    module, why = native_build.load_compiled("_no_such_native")
    assert module is None and why == "pure Python: no compiled _no_such_native was built"


PROBE = """
import json, types
import core.noma.render as r
from core.noma.export import compiled, export
from core.noma import parse
doc = parse("# T\\n\\nSee **x**.\\n")
assert export(doc, "markdown").startswith("# ")
print(json.dumps({
    "render": r.ACCELERATOR,
    "render_is_pure": isinstance(r.render_noma, types.FunctionType),
    "markdown": compiled.load("markdown")[1],
    "html": compiled.load("html")[1],
}))
"""


def test_pure_python_env_var_gives_the_pure_renderers() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(NOMA_PURE_PYTHON="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report: dict[str, Any] = json.loads(proc.stdout)
    assert report["render_is_pure"] is True
    for key in ("render", "markdown", "html"):
        assert "NOMA_PURE_PYTHON" in report[key]


# -- the build ---------------------------------------------------------------------------------


def _setup_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("noma_setup", REPO / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines, does not run setup()
    return module


def test_the_generated_copies_record_what_the_loader_checks(tmp_path: Path) -> None:
    setup = _setup_module()
    setup.generate(tmp_path / "tree")
    files = setup.generate_renderers(tmp_path / "tree")
    names = sorted(f.relative_to(tmp_path / "tree" / "core" / "noma").as_posix() for f in files)
    assert names == [
        "_export_native/common.py",
        "_export_native/html.py",
        "_export_native/inline.py",
        "_export_native/markdown.py",
        "_render_native.py",
    ]
    assert setup.render_digests() == native_build.digests()
    for path in files:
        text = path.read_text(encoding="utf-8")
        namespace: dict[str, Any] = {}
        exec(text.rsplit("\nSOURCE_DIGESTS = ", 1)[1].join(["digests = ", ""]), namespace)
        assert namespace["digests"] == native_build.digests(), path
        assert "load_compiled" not in text and "from .inert import" not in text
    render_copy = (tmp_path / "tree" / "core" / "noma" / "_render_native.py").read_text("utf-8")
    assert "from ._attrs_native import " in render_copy and "from .attrs import" not in render_copy
    assert not (PACKAGE / "_render_native.py").exists()  # nothing generated in the sources
    assert not list((PACKAGE / "export").glob("_*native*"))
