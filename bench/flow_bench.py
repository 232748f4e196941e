"""Flow run latency: start and advance p95 on a 100-step flow, and consent mint p95.

Each figure is the wall time of one handler call (one SQLite WAL transaction, fsync'd)
through the same `core.flow` handlers every surface uses, in a fresh temporary
workspace. Advance alternates in_progress -> done down all 100 steps of several runs, so
the frontier walk covers every position. Tests assert bounded work; this reports time.

    .venv/bin/python -m bench.flow_bench [--runs 50] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from core.flow import FlowContext, advance_step, mint_consent, start_run
from core.flow.lanes import ProviderLane
from core.workspace import Workspace

FLOW_ID = "flow_bench_hundred"
STEPS = 100


def _bundle() -> dict[str, Any]:
    steps = [
        {
            "schema": "knowtation.flow_step/v0",
            "step_id": f"{FLOW_ID}#{i}",
            "flow_id": FLOW_ID,
            "ordinal": i,
            "owned_job": f"Step {i}",
            "instruction": f"Do step {i}.",
            "trigger": "After the previous step.",
            "when_not_to_run": "Never skipped.",
            "boundaries": ["Stay in scope."],
            "output_shape": "Nothing.",
            "verification": {
                "kind": "artifact_exists",
                "evidence_required": False,
                "description": "None.",
            },
            "automatable": "automatable" if i == 1 else "manual",
        }
        for i in range(1, STEPS + 1)
    ]
    flow = {
        "schema": "knowtation.flow/v0",
        "flow_id": FLOW_ID,
        "title": "Bench",
        "version": "1.0.0",
        "scope": "personal",
        "summary": "100 steps.",
        "steps": [s["step_id"] for s in steps],
        "updated": "2026-06-20T12:00:00Z",
        "truncated": False,
    }
    return {"flow": flow, "steps": steps}


def _timed(fn: Callable[[], Any], into: list[float]) -> Any:
    started = time.perf_counter()
    result = fn()
    into.append((time.perf_counter() - started) * 1000)
    if not isinstance(result, dict):
        raise SystemExit(f"handler refused: {result}")
    return result


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(p95, 3),
        "max_ms": round(ordered[-1], 3),
    }


def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="flow-bench-") as tmp:
        root = Path(tmp)
        (root / "flows").mkdir()
        (root / "flows" / "bench.flow.yaml").write_text(yaml.safe_dump(_bundle(), sort_keys=False))
        (root / "noma-workbench.toml").write_text(
            '[workbench]\nactor = "bench"\n[gates]\nrun_writes_enabled = true\n'
            "automatable_execution_enabled = true\n"
        )
        lanes = {"cloud_premium": ProviderLane("cloud_premium")}
        ctx = FlowContext.open(Workspace.open(root), lanes=lanes)  # no execution here
        start_ms: list[float] = []
        advance_ms: list[float] = []
        mint_ms: list[float] = []
        try:
            start = {"flow_id": FLOW_ID, "flow_version": "1.0.0"}
            start_run(ctx, start)  # warm: parse + snapshot cache
            run_ids = [
                _timed(lambda: start_run(ctx, start), start_ms)["run"]["run_id"]
                for _ in range(runs)
            ]
            for rid in run_ids:
                request = {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 100}
                _timed(partial(mint_consent, ctx, request), mint_ms)
            for rid in run_ids[: max(1, runs // 5)]:
                for i in range(1, STEPS + 1):
                    for to in ("in_progress", "done"):
                        request = {"run_id": rid, "step_id": f"{FLOW_ID}#{i}", "to_status": to}
                        _timed(partial(advance_step, ctx, request), advance_ms)
        finally:
            ctx.close()
    return {
        "flow_steps": STEPS,
        "start": _summary(start_ms),
        "advance": _summary(advance_ms),
        "consent_mint": _summary(mint_ms),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="runs to start (default 50)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(max(1, args.runs))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"flow bench: {STEPS}-step flow, SQLite WAL, synchronous=FULL")
    for name in ("start", "advance", "consent_mint"):
        s = report[name]
        print(
            f"  {name:<13} n={s['n']:<5} p50 {s['p50_ms']:>7.3f} ms   p95 {s['p95_ms']:>7.3f} ms"
            f"   max {s['max_ms']:>7.3f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
