"""The installed package works outside the checkout: build a wheel, install it into a fresh
virtualenv in a temp dir, and from there load the Skills Protocol guide, list the shipped
skills, run ``noma-tui --help`` and ``noma verify`` on the conformance corpus, and copy the
demo workspace. Proves the skills and the demo are package data found through
``importlib.resources``, not files that only a source checkout has.

One venv build (about a minute with a warm pip cache). CI runs it (``.ci/run`` sets
``NOMA_WHEEL_TEST=1``); elsewhere it skips unless that is set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import core.noma.parser as parser
from tests.conftest import REPO, shared_dir

pytestmark = pytest.mark.skipif(
    os.environ.get("NOMA_WHEEL_TEST") != "1",
    reason="builds a wheel and a fresh virtualenv: set NOMA_WHEEL_TEST=1 (CI sets it)",
)

PROBE = """
import asyncio, json, sys
from pathlib import Path
import core, skills
import core.noma.parser
import core.noma.render
from core.noma.export.compiled import load
from core.skills_runtime.service import SkillsRuntime

async def main():
    rt = SkillsRuntime(Path(sys.argv[1]))  # no sandbox start: no run happens here
    guide = await rt.load_skills_protocol_guide({})
    listed = await rt.list_skills({"detail": "summary"})
    from noma_tui.demo import ensure_demo_copy
    demo = ensure_demo_copy(Path(sys.argv[2]))
    print(json.dumps({
        "core": core.__file__,
        "parser": core.noma.parser.ACCELERATOR,
        "render": core.noma.render.ACCELERATOR,
        "exports": [load(name)[1] for name in ("markdown", "html")],
        "skills": skills.__file__,
        "guide": guide["content"],
        "names": [s["name"] for s in listed["skills"]],
        "demo": sorted(p.relative_to(demo).as_posix() for p in demo.rglob("*") if p.is_file()),
    }))

asyncio.run(main())
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{argv}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.mark.long(60)  # the suite's longest test (~47 s on the idle 2-core machine)
def test_installed_wheel_finds_its_skills_and_demo_and_runs_its_commands(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    corpus = shared_dir("conformance")
    tmp = tmp_path_factory.mktemp("wheel")
    assert not tmp.resolve().is_relative_to(REPO)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp / "dist"),
            str(REPO),
        ],
        tmp,
        env,
    )
    [wheel] = list((tmp / "dist").glob("noma_workbench-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    # The accelerator ships compiled or not at all: never its generated Python copies.
    assert not [n for n in names if n.endswith(("_parser_native.py", "_attrs_native.py"))]
    assert not [n for n in names if "_export_native/" in n and n.endswith(".py")]
    assert "core/noma/_render_native.py" not in names
    assert all(n.startswith("core/noma/") for n in names if n.endswith(".so")), names
    _run([sys.executable, "-m", "venv", str(tmp / "venv")], tmp, env)
    py = tmp / "venv" / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", str(wheel)], tmp, env)

    workspace = tmp / "ws"
    workspace.mkdir()
    probe = _run([str(py), "-c", PROBE, str(workspace), str(tmp / "demo")], tmp, env)
    found = json.loads(probe.stdout)
    site = str(tmp / "venv")
    assert found["core"].startswith(site) and found["skills"].startswith(site), found
    # Where this checkout's own install built the compiled parser, the wheel has it too.
    if parser.ACCELERATED or os.environ.get("NOMA_REQUIRE_ACCEL") == "1":
        assert found["parser"] == "compiled with mypyc", found["parser"]
        assert found["render"] == "compiled with mypyc", found["render"]
        assert found["exports"] == ["compiled with mypyc"] * 2, found["exports"]
    else:
        assert found["parser"].startswith("pure Python"), found["parser"]
    assert "Skills Protocol" in found["guide"] and "list_skills" in found["guide"]
    assert {"skills.protocol.guide", "salesforce.leads.sync", "gdrive.sheets.read"} <= set(
        found["names"]
    )
    assert "noma-workbench.toml" in found["demo"]
    assert "flows/lead_import.flow.yaml" in found["demo"]
    assert not [name for name in found["demo"] if name.endswith("__init__.py")]

    bin_dir = tmp / "venv" / "bin"
    helped = _run([str(bin_dir / "noma-tui"), "--help"], tmp, env)
    assert "usage" in helped.stdout.lower()
    verified = subprocess.run(
        [str(bin_dir / "noma"), "verify", str(corpus)],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    assert verified.stdout.strip()
