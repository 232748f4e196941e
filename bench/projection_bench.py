"""Flow projection latency: median wall time of one `project_flow` call per harness.

Through the handler every surface calls (catalog lookup, visibility, rendering, hashing),
on the largest starter flow (8 steps, from ``NOMA_FLOWS_STARTER_DIR``, default
``../shared/flows-starter``) and on `flow_bench.FLOW_ID` (100 steps), plus ``AGENTS.md``
from the six starters. The catalog is warm (as in a long-running server); the figure is
the generator's cost, not parsing the bundle file.

    .venv/bin/python -m bench.projection_bench [--repeat 50]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from core.flow import FlowContext
from core.flow.projection import HARNESSES, project_agents_md, project_flow
from core.trust import TrustStore
from core.workspace import Workspace

from .flow_bench import FLOW_ID, _bundle
from .timing import median_ms

STARTER = Path(
    os.environ.get(
        "NOMA_FLOWS_STARTER_DIR",
        Path(__file__).resolve().parents[1].parent / "shared" / "flows-starter",
    )
)
LARGEST = "flow_multi_repo_change"


def _workspace(tmp: Path) -> Path:
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        os.environ[name] = str(tmp / "user" / name.lower())
    root = tmp / "ws"
    (root / "flows").mkdir(parents=True)
    for path in sorted(STARTER.glob("flow_*.json")):
        shutil.copyfile(path, root / "flows" / path.name)
    (root / "flows" / "bench.flow.yaml").write_text(yaml.safe_dump(_bundle(), sort_keys=False))
    (root / "noma-workbench.toml").write_text(
        '[workbench]\nactor = "bench"\n[policy]\nscopes = ["personal", "project"]\n'
    )
    workspace = Workspace.open(root)
    TrustStore().trust(workspace.root, workspace.config)
    return root


def run(repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = FlowContext.open(Workspace.open(_workspace(Path(tmp))))
        try:
            out: dict[str, Any] = {"repeat": repeat}
            for flow_id, label in ((LARGEST, "starter_8_steps"), (FLOW_ID, "flow_100_steps")):
                figures = {}
                for harness in HARNESSES:
                    request = {"flow_id": flow_id, "harness": harness}
                    result = project_flow(ctx, request)
                    if not isinstance(result, dict):
                        raise SystemExit(f"refused: {result}")
                    figures[harness] = round(
                        median_ms(lambda r=request: project_flow(ctx, r), repeat), 3
                    )
                out[f"{label}_median_ms"] = figures
            out["agents_md_six_starters_median_ms"] = round(
                median_ms(lambda: project_agents_md(ctx), repeat), 3
            )
            return out
        finally:
            ctx.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.projection_bench")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.repeat), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
