"""Flow run latency: start and advance p95 on a 100-step flow, and consent mint p95.

Each figure is the wall time of one handler call (one SQLite WAL transaction, fsync'd)
through the same `core.flow` handlers every surface uses, in a fresh temporary
workspace. Advance alternates in_progress -> done down all 100 steps of several runs, so
the frontier walk covers every position. Tests assert bounded work; this reports time.

    .venv/bin/python -m bench.flow_bench [--runs 50] [--http] [--store sqlite|postgresql|both]

``--http`` also times the same calls over the team hub's REST routes: a uvicorn server on
127.0.0.1 (a free port) in this process, one keep-alive httpx client, a bearer token.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def _workspace(tmp: Path) -> Path:
    """A benchmark workspace in ``tmp``, trusted (its gates apply) in user dirs beside it."""
    root = tmp / "ws"
    (root / "flows").mkdir(parents=True)
    (root / "flows" / "bench.flow.yaml").write_text(yaml.safe_dump(_bundle(), sort_keys=False))
    (root / "noma-workbench.toml").write_text(
        '[workbench]\nactor = "bench"\n[gates]\nrun_writes_enabled = true\n'
        "automatable_execution_enabled = true\n"
    )
    # The gates apply in a trusted folder only (core.trust). Trusted, and its hub tokens
    # kept, in user dirs of this run, so the user's own never collect temp dirs.
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        os.environ[name] = str(tmp / "user" / name.lower())
    # The servers keep the owner's token in the runtime dir (core.netauth.local_token).
    Path(os.environ["XDG_RUNTIME_DIR"]).mkdir(mode=0o700, parents=True, exist_ok=True)
    from core.trust import TrustStore

    workspace = Workspace.open(root)
    TrustStore().trust(workspace.root, workspace.config)
    return root


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` on 127.0.0.1 at a port bound here first (so never a fixed one)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Accepted sockets inherit this: without it each response waits on delayed ACKs.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


def run_http(runs: int) -> dict[str, Any]:
    import httpx

    from core.hub.app import Hub, create_hub_app

    with tempfile.TemporaryDirectory(prefix="flow-bench-http-") as tmp:
        root = _workspace(Path(tmp))
        hub = Hub.open(root, require_tokens=True, lanes={"cloud_premium": ProviderLane("x")})
        token, _ = hub.tokens.create("bench", human=True)
        start_ms: list[float] = []
        advance_ms: list[float] = []
        mint_ms: list[float] = []
        base = f"/api/v1/flows/{FLOW_ID}/runs"
        try:
            with (
                _serving(create_hub_app(hub)) as url,
                httpx.Client(
                    base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
                ) as http,
            ):

                def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
                    r = http.post(path, json=body)
                    out: dict[str, Any] = r.json()
                    return out if r.status_code in (200, 201) else {"refused": out}

                def timed(path: str, body: dict[str, Any], into: list[float]) -> dict[str, Any]:
                    out = _timed(lambda: post(path, body), into)
                    if "refused" in out:
                        raise SystemExit(f"refused: {out['refused']}")
                    return out

                start = {"flow_version": "1.0.0"}
                post(base, start)  # warm
                run_ids = [timed(base, start, start_ms)["run"]["run_id"] for _ in range(runs)]
                for rid in run_ids:
                    consent = {"allowed_lanes": ["local_default"], "cost_cap_units": 100}
                    timed(f"{base}/{rid}/consent", consent, mint_ms)
                for rid in run_ids[: max(1, runs // 5)]:
                    for i in range(1, STEPS + 1):
                        for to in ("in_progress", "done"):
                            body = {"step_id": f"{FLOW_ID}#{i}", "to_status": to}
                            timed(f"{base}/{rid}/advance", body, advance_ms)
        finally:
            hub.close()
    return {
        "flow_steps": STEPS,
        "start": _summary(start_ms),
        "advance": _summary(advance_ms),
        "consent_mint": _summary(mint_ms),
    }


def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="flow-bench-") as tmp:
        root = _workspace(Path(tmp))
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


def _with_store(store: str, fn: Callable[[int], dict[str, Any]], runs: int) -> dict[str, Any]:
    """Run ``fn`` on the SQLite store, or on a throw-away durable PostgreSQL cluster."""
    import os

    if store == "sqlite":
        os.environ.pop("NOMA_RUN_STORE", None)
        return fn(runs)
    from core.flow.pg_cluster import EphemeralCluster

    cluster = EphemeralCluster(durable=True)
    cluster.start()
    try:
        os.environ["NOMA_RUN_STORE"] = cluster.new_schema_url()
        return fn(runs)
    finally:
        os.environ.pop("NOMA_RUN_STORE", None)
        cluster.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="runs to start (default 50)")
    parser.add_argument("--http", action="store_true", help="also over the hub's REST routes")
    parser.add_argument(
        "--store",
        choices=("sqlite", "postgresql", "both"),
        default="sqlite",
        help="run store (postgresql: a throw-away cluster, fsync on)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    stores = ("sqlite", "postgresql") if args.store == "both" else (args.store,)
    reports: dict[str, Any] = {}
    for store in stores:
        reports[f"{store}/handlers"] = _with_store(store, run, max(1, args.runs))
        if args.http:
            reports[f"{store}/http"] = _with_store(store, run_http, max(1, args.runs))
    if args.json:
        single = len(reports) == 1
        print(json.dumps(next(iter(reports.values())) if single else reports, indent=2))
        return 0
    for where, report in reports.items():
        print(f"flow bench ({where}): {STEPS}-step flow")
        for name in ("start", "advance", "consent_mint"):
            s = report[name]
            print(
                f"  {name:<13} n={s['n']:<5} p50 {s['p50_ms']:>7.3f} ms   "
                f"p95 {s['p95_ms']:>7.3f} ms   max {s['max_ms']:>7.3f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
