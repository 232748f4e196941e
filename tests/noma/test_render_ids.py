"""Issue 29: ``render --to noma`` never changes an id. It used to drop an explicit id equal
to its title's slug even where the re-parse gives that heading another id (``## H
{id="h"}`` twice read back as ``h, h-2``): a silent change of meaning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.noma.parser import parse
from core.noma.render import render_noma, structure

CASES = {
    "explicit-twice": '## H {id="h"}\n\nx\n\n## H {id="h"}\n\ny\n',
    "explicit-three-times": '# H {id="h"}\n\n## H {id="h"}\n\n### H {id="h"}\n',
    "implicit-then-explicit": '## H\n\nx\n\n## H {id="h"}\n',
    "explicit-then-implicit": '## H {id="h"}\n\nx\n\n## H\n',
    "explicit-slug-and-directive": '## H {id="h"}\n\n::claim{id="h"}\nbody\n::\n',
    "nested-in-a-directive": '::note{id="n"}\n## H {id="h"}\n\n## H {id="h"}\n::\n',
    "suffixed-explicit": '## H\n\n## H {id="h-2"}\n\n## H\n',
    "plain": '# Title {id="title"}\n\n## Other\n',
}


def ids(text: str) -> list[str | None]:
    return [n.id for n, _ in parse(text).walk() if n.type in ("section", "directive")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_render_keeps_every_id(name: str) -> None:
    text = CASES[name]
    rendered = render_noma(parse(text))
    assert ids(rendered) == ids(text), rendered
    assert structure(parse(rendered)) == structure(parse(text))


def test_the_normal_form_still_drops_a_safe_explicit_slug_id() -> None:
    assert render_noma(parse('# Title {id="title"}\n')) == "# Title\n"


def test_the_cli_render_keeps_the_ids(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text(CASES["explicit-twice"], encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "core.cli", "render", str(doc)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert ids(out.stdout) == ["h", "h"]
