"""Content bombs: small documents that cost the reader far more than their size.

Each bomb is read by every surface that reads it (parse, validate, the three exports, the
JSON render, a dataset patch op, the capability sidecar) in a child process (one per test
worker, bomb after bomb) with a generous timeout, so a regression fails here instead of
hanging the suite. The product must bound each one itself: a coded finding or refusal, a
bounded output, no traceback.
No wall-clock asserts: the timeout only turns a hang into a failure.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

TIMEOUT = 120  # seconds: far beyond any bounded run on a loaded machine


def _laughs(levels: int, *, records: bool = False) -> list[str]:
    """YAML whose last anchor expands to 9**levels leaves ("billion laughs")."""
    first = '{k: "lol"}' if records else '"lol"'
    lines = ["a0: &a0 [" + ", ".join([first] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return lines


def _dataset(body: list[str], attrs: str = "") -> str:
    return "# Bomb\n\n" + f'::dataset{{id="d"{attrs}}}\n' + "\n".join(body) + "\n::\n"


def _deep(n: int) -> str:
    return "[" * n + "]" * n


_WIDTHS = "".join("`" * k + "a" for k in range(2, 1400)) + "`a" * 100_000


BOMBS: dict[str, str] = {
    # dataset bodies: aliases, depth, numbers
    "dataset-laughs": _dataset([*_laughs(9), "rows: [*a8, *a8]"]),
    "dataset-laughs-records": _dataset([*_laughs(8, records=True), "rows: *a7"]),
    "dataset-laughs-schema": _dataset([*_laughs(9), "schema: *a8", "rows:", "  - [1]"]),
    "dataset-self-alias": _dataset(["rows: &r [*r]"]),
    "dataset-deep-yaml": _dataset(["rows:", "  - " + _deep(990)]),
    "dataset-deep-block-yaml": _dataset(["rows:", *(("  " * k) + "- " for k in range(1, 400))]),
    "dataset-deep-json": _dataset(["[", "  " + _deep(990), "]"]),
    "dataset-deep-json-inline": _dataset(["[" + _deep(5000) + "]"]),
    "dataset-bigint-yaml": _dataset(["schema:", "  a: " + "9" * 5000, "rows:", "  - [1]"]),
    "dataset-bigint-row": _dataset(["schema:", "  a: number", "rows:", "  - [" + "9" * 5000 + "]"]),
    "dataset-bigint-json": _dataset(["[", "  [" + "9" * 5000 + "]", "]"]),
    # frontmatter
    "frontmatter-deep": "---\nx: " + _deep(990) + "\n---\n\n# T\n",
    "frontmatter-laughs": "---\n" + "\n".join(_laughs(9)) + "\n---\n\n# T\n",
    "frontmatter-bigint": "---\nx: " + "9" * 5000 + "\n---\n\n# T\n",
    # attributes and formulas
    "attribute-bigint": '# T\n\n::claim{id="c" n=' + "9" * 5000 + "}\nx\n::\n",
    "formula-power-tower": (
        '# T\n\n::control{id="x" default=9}\n::\n\n'
        '::computed_metric{id="m" formula="9^9^9^9^9^x"}\n::\n'
    ),
    "formula-deep-parens": '# T\n\n::computed_metric{id="m" formula="'
    + "(" * 3000
    + "1"
    + ")" * 3000
    + '"}\n::\n',
    "plotly-deep-json": "# T\n\n::plotly\n" + _deep(100_000) + "\n::\n",
    # the block parser and the renderers
    "nested-directives": "# T\n\n"
    + "".join(":" * (k + 2) + f'note{{id="n{k}"}}\n' for k in range(600))
    + "x\n"
    + "".join(":" * (k + 2) + "\n" for k in reversed(range(600))),
    "nested-quotes": "# T\n\n" + "\n".join("> " * k + "q" for k in range(1, 2000)) + "\n",
    "nested-list": "# T\n\n" + "\n".join("  " * k + "- i" for k in range(2000)) + "\n",
    "nested-emphasis": "# T\n\n" + "*_" * 50_000 + "x" + "_*" * 50_000 + "\n",
    "nested-brackets": "# T\n\n" + "[" * 100_000 + "x" + "](u)" * 1000 + "\n",
    # inline regexes on one long line
    "long-line-destinations": "# T\n\n" + "](<" * 200_000 + "\n",
    "long-line-autolinks": "# T\n\n" + "<a" * 200_000 + "\n",
    "long-line-backticks": "# T\n\n" + "".join("`" * k + "a" for k in range(1, 1500)) + "\n",
    "long-line-wikilinks": "# T\n\n" + "[[" * 200_000 + "\n",
    # backtick runs of many unmatched widths, then single backticks: pairing each opener
    # by scanning the later runs was runs x runs (in a paragraph and in a table row)
    "unmatched-widths": "# T\n\n" + _WIDTHS + "\n",
    "unmatched-widths-table": "# T\n\n| a | b |\n| --- | --- |\n| " + _WIDTHS + " | x |\n",
    # a long run then no match: the validator's code-span pattern backtracked N x N x len
    "backtick-run-wikilink": "# T\n\n" + "`" * 30_000 + "a" * 30_000 + " [[x]]\n",
    "huge-table": "# T\n\n| a | b |\n| --- | --- |\n" + "| `x` | <b> |\n" * 50_000,
}

# What each bomb must give: the codes a surface reports for it.
DATASET_BOMBS = {name for name in BOMBS if name.startswith("dataset-")}
FRONTMATTER_BOMBS = {name for name in BOMBS if name.startswith("frontmatter-")}

_CHILD = r"""
import json, sys, traceback
from pathlib import Path
from core.noma import parse
from core.noma.export import export
from core.noma.render import render_json, render_noma
from core.noma.validate import validate
from core.noma.patch import PatchError, apply_ops_to_text
from core.noma.patch.capabilities import load_descriptor

def read(path):
    text = path.read_text(encoding="utf-8")
    out = {}
    doc = parse(text)
    out["notes"] = [[n.code, n.message] for n in doc.notes]
    out["diagnostics"] = [[d.code, d.message] for d in validate(doc, base_dir=path.parent)]
    for fmt in ("markdown", "html", "llm"):
        out[fmt] = len(export(doc, fmt))
    out["json"] = len(render_json(doc))
    out["noma"] = len(render_noma(doc))
    try:
        apply_ops_to_text(text, [{"op": "update_dataset_cell", "id": "d", "row": 0,
                                  "column": 0, "value": "9" * 5000}])
        out["patch"] = "applied"
    except PatchError as exc:
        out["patch"] = [exc.code, str(exc)]
    out["sidecar"] = load_descriptor(path).problems
    return out

for line in sys.stdin:
    try:
        answer = {"out": read(Path(line.rstrip("\n")))}
    except BaseException:
        answer = {"traceback": traceback.format_exc()}
    print(json.dumps(answer), flush=True)
"""


class _Reader:
    """One child process per test worker reads bomb after bomb (a path per line in, one
    JSON line out): the worker stays safe from a hang or a crash, and the ~0.4 s of
    imports is paid once, not per bomb. A bomb that times out or kills the child fails
    its own test; the next bomb gets a fresh child."""

    def __init__(self, tmp: Path) -> None:
        self.stderr_path = tmp / "reader.stderr"
        self.proc: subprocess.Popen[str] | None = None

    def read(self, path: Path) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            with self.stderr_path.open("w") as stderr:
                self.proc = subprocess.Popen(
                    [sys.executable, "-c", _CHILD],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                    cwd=REPO,
                )
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        before = self.stderr_path.stat().st_size
        proc.stdin.write(f"{path}\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            raise AssertionError(f"no answer for {path.name}: {self._stderr(0)}")
        answer: dict[str, Any] = json.loads(line)
        errors = self._stderr(before)
        assert "traceback" not in answer, answer.get("traceback")
        assert "Traceback" not in errors, errors
        out: dict[str, Any] = answer["out"]
        return out

    def _stderr(self, offset: int) -> str:
        with self.stderr_path.open("rb") as stderr:
            stderr.seek(offset)
            return stderr.read().decode("utf-8", "replace")[-3000:]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Reader]:
    reading = _Reader(tmp_path_factory.mktemp("reader"))
    yield reading
    reading.close()


def _run(reader: _Reader, tmp_path: Path, name: str) -> dict[str, Any]:
    path = tmp_path / f"{name}.noma"
    path.write_text(BOMBS[name], encoding="utf-8")
    # The same bytes as the document's capability sidecar: a workspace file read as YAML.
    sidecar = BOMBS[name]
    if name in FRONTMATTER_BOMBS:
        sidecar = sidecar.split("\n---\n", 1)[0].removeprefix("---\n")
    elif name in DATASET_BOMBS:
        sidecar = sidecar.split("\n", 3)[3].rsplit("\n::", 1)[0]
    (tmp_path / f"{name}.noma.capabilities.yml").write_text(sidecar, encoding="utf-8")
    return reader.read(path)


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_every_surface_bounds_the_bomb(reader: _Reader, tmp_path: Path, name: str) -> None:
    out = _run(reader, tmp_path, name)
    size = len(BOMBS[name])
    for fmt in ("markdown", "html", "llm", "noma"):
        # No expansion: every output is within a small factor of the input.
        assert out[fmt] <= 8 * size + 20_000, (fmt, out[fmt], size)
    # The AST repeats each directive's body at every level: at most 64 levels deep.
    assert out["json"] <= 70 * size + 20_000, (out["json"], size)
    codes = {code for code, _message in out["diagnostics"]}
    notes = {code for code, _message in out["notes"]}
    if name in DATASET_BOMBS:
        assert "dataset-body-unreadable" in codes, out["diagnostics"]
        assert out["patch"][0] == "invalid_content", out["patch"]
    if name in FRONTMATTER_BOMBS:
        assert notes == {"frontmatter-invalid-yaml"}, out["notes"]
    if name in DATASET_BOMBS | FRONTMATTER_BOMBS:
        assert out["sidecar"] and out["sidecar"][0].startswith("not valid YAML"), out["sidecar"]


def test_a_refused_dataset_body_says_which_bound() -> None:
    from core.noma import parse
    from core.noma.validate import validate

    messages = {
        name: [d.message for d in validate(parse(BOMBS[name])) if d.code.startswith("dataset-")]
        for name in ("dataset-laughs", "dataset-deep-yaml", "dataset-bigint-yaml")
    }
    assert "values (YAML aliases)" in messages["dataset-laughs"][0]
    assert "nested too deeply" in messages["dataset-deep-yaml"][0]
    assert "more than 4300 digits" in messages["dataset-bigint-yaml"][0]


def test_an_attribute_number_too_long_to_convert_stays_text() -> None:
    from core.noma import parse

    doc = parse(BOMBS["attribute-bigint"])
    claim = doc.children[0].children[0]
    assert claim.attrs["n"] == "9" * 5000


def test_ordinary_datasets_are_not_refused() -> None:
    """The bounds never refuse unaliased data: a 20,000-row dataset is read whole."""
    from core.noma import parse
    from core.noma.export import export
    from core.noma.validate import validate

    rows = [f"  - [r{k}, {k}, {k / 7:.3f}]" for k in range(20_000)]
    text = _dataset(["schema:", "  a: string", "  b: integer", "  c: number", "rows:", *rows])
    doc = parse(text)
    assert not [d for d in validate(doc) if d.code == "dataset-body-unreadable"]
    assert "<td>r19999</td>" in export(doc, "html")


def test_directives_nest_at_most_64_deep() -> None:
    """Deeper openers are text with a note, so every recursive reader of the tree is safe."""
    from core.noma import parse
    from core.noma.nodes import Directive
    from core.noma.parser import MAX_DIRECTIVE_DEPTH

    doc = parse(BOMBS["nested-directives"])
    deepest = max(n.depth for n, _parent in doc.walk() if isinstance(n, Directive))
    assert deepest <= MAX_DIRECTIVE_DEPTH + 1  # the document's heading section is one level
    codes = {n.code for n in doc.notes}
    assert "directive-too-deep" in codes


TRANSCRIPT_BOMBS = {
    "bigint": '{"a": ' + "9" * 5000 + "}",
    "deep-array": _deep(100_000),
    "deep-record": '{"a":' + _deep(900) + "}",
}


@pytest.mark.parametrize("name", sorted(TRANSCRIPT_BOMBS))
def test_a_transcript_line_bomb_is_a_broken_line_not_a_traceback(tmp_path: Path, name: str) -> None:
    doc = tmp_path / "t.noma"
    doc.write_text("# T\n", encoding="utf-8")
    patches = tmp_path / "t.noma.patches"
    patches.write_text(TRANSCRIPT_BOMBS[name] + "\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "core.cli", "transcript", "verify", str(patches)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO,
    )
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "first broken line: 1" in result.stdout and "cannot be read" in result.stdout


# Other workspace files read as structured data: flow bundles, skill manifests (skill.toml
# and SKILL.md frontmatter) and the workspace's own noma-workbench.toml.
_YAML_BOMBS = {
    "laughs": "\n".join(_laughs(9)) + "\nflow: *a8\nsteps: *a8\n",
    "bigint": "flow: " + "9" * 5000 + "\nsteps: []\n",
    "deep": "flow: " + _deep(990) + "\nsteps: []\n",
}
_TOML_BOMBS = {
    "bigint": "a = " + "9" * 5000 + "\n",
    "deep-array": "a = " + _deep(5000) + "\n",
    "deep-table": "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n",
}

_FILES_CHILD = r"""
import json, sys
from pathlib import Path
from core.flow.bundle import BundleError, parse_bundle_text
from core.skills_runtime.manifest import ManifestError, parse_manifest, split_frontmatter
from core.workspace import Workspace, WorkspaceError

kind, text = sys.argv[1], Path(sys.argv[2]).read_text(encoding="utf-8")
if kind == "bundle":
    try:
        parse_bundle_text(text)
        out = "parsed"
    except BundleError as exc:
        out = "refused: " + str(exc)
elif kind == "skill-md":
    data, body = split_frontmatter("---\n" + text + "---\nbody\n")
    out = "frontmatter: " + json.dumps(data)[:200]
elif kind == "skill-toml":
    try:
        parse_manifest(text)
        out = "parsed"
    except ManifestError as exc:
        out = "refused: " + str(exc)
else:
    folder = Path(sys.argv[2]).parent
    try:
        Workspace.open(folder)
        out = "opened"
    except WorkspaceError as exc:
        out = "refused: " + str(exc)
print(out)
"""


def _read_file(tmp_path: Path, kind: str, text: str) -> str:
    path = tmp_path / "noma-workbench.toml"
    path.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", _FILES_CHILD, kind, str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO,
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return result.stdout.strip()


@pytest.mark.parametrize("name", sorted(_YAML_BOMBS))
def test_a_flow_bundle_bomb_is_refused(tmp_path: Path, name: str) -> None:
    assert _read_file(tmp_path, "bundle", _YAML_BOMBS[name]).startswith("refused: ")


@pytest.mark.parametrize("name", sorted(_YAML_BOMBS))
def test_a_skill_md_frontmatter_bomb_is_ignored(tmp_path: Path, name: str) -> None:
    assert _read_file(tmp_path, "skill-md", _YAML_BOMBS[name]) == "frontmatter: {}"


@pytest.mark.parametrize("name", sorted(_TOML_BOMBS))
def test_a_toml_bomb_is_refused(tmp_path: Path, name: str) -> None:
    assert _read_file(tmp_path, "skill-toml", _TOML_BOMBS[name]).startswith("refused: ")
    assert _read_file(tmp_path, "workspace", _TOML_BOMBS[name]).startswith("refused: ")


_TABLE_CELL_CHILD = r"""
from core.noma.patch import PatchError, apply_ops_to_text

text = '::table{id="t" header}\na | b\n1 | 2\n::\n'
value = "`a`|" * 100_000
try:
    out = apply_ops_to_text(
        text, [{"op": "update_table_cell", "id": "t", "row": 0, "column": 0, "value": value}]
    )
    print("applied", out.count("`a`|"))
except PatchError as exc:
    print("refused", exc.code)
"""


def test_a_table_cell_of_many_code_spans_is_escaped_in_one_pass() -> None:
    """100,000 code spans with a pipe after each: checking every pipe against every span
    was spans x characters."""
    result = subprocess.run(
        [sys.executable, "-c", _TABLE_CELL_CHILD],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[0] in ("applied", "refused"), result.stdout
