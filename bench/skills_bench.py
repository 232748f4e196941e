"""Median (and p95) ``execute_skill`` round trip for a trivial skill vs a bare
``python3 -I -S -c pass`` (and ``python3 -c pass``, which also imports ``site``).

Both are measured in the same run, interleaved call by call, so machine load hits them
alike. The round trip is a real JSON-RPC POST over loopback to ``noma skills serve``
(started here in a subprocess, on a workspace trusted in user dirs of this run, and called
with the owner's token the server keeps there) that runs the skill in a fresh sandbox. The
target (issue 24) is a round trip of at most 1.5x the bare ``-I -S`` interpreter spawn.
On the bubblewrap tier each slot's sandbox is started ahead of the call (sandbox/warm.py);
the loop's pause between calls leaves it the time to be ready, as an interactive caller
does.

    .venv/bin/python -m bench.skills_bench [--runs 40] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

TARGET_RATIO = 1.5
SETTLE_S = 0.08
SANDBOX_PYTHON = os.environ.get("NOMA_SANDBOX_PYTHON", "/usr/bin/python3")

SKILL_TOML = """\
name = "bench.noop"
version = "0.1.0"
description = "Return a constant; measures the runtime's own overhead."
kind = "action"

[runtime]
language = "python"
entrypoint = "code/main.py"
export = "main"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _make_workspace(root: Path) -> None:
    skill = root / "skills" / "bench.noop"
    (skill / "code").mkdir(parents=True)
    (skill / "skill.toml").write_text(SKILL_TOML)
    (skill / "SKILL.md").write_text("---\nname: noop\n---\nReturns {'ok': true}.\n")
    (skill / "code" / "main.py").write_text("def main(args):\n    return {'ok': True}\n")


def _user_dirs(tmp: Path, ws: Path) -> dict[str, str]:
    """XDG dirs of this run (the workspace trusted there; the server's token kept there)."""
    env = {
        name: str(tmp / "user" / name.lower())
        for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR")
    }
    for path in env.values():
        Path(path).mkdir(mode=0o700, parents=True, exist_ok=True)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        from core.trust import TrustStore
        from core.workspace import Workspace

        workspace = Workspace.open(ws)
        TrustStore().trust(workspace.root, workspace.config)
    except ImportError:  # a checkout from before workspace trust
        pass
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return env


def _owner_token(env: dict[str, str]) -> str | None:
    path = Path(env["XDG_RUNTIME_DIR"]) / "noma-workbench" / "server-token"
    try:
        return path.read_text().strip() or None
    except OSError:
        return None  # not made yet (or a checkout from before the token: none needed)


def _wait_ready(
    client: httpx.Client, base: str, proc: subprocess.Popen[bytes], env: dict[str, str]
) -> dict:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        token = _owner_token(env)
        if token is not None:
            client.headers["Authorization"] = f"Bearer {token}"
        try:
            r = client.get(f"{base}/healthz")
            if r.status_code == 200:
                return r.json()  # type: ignore[no-any-return]
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise SystemExit("server did not start within 60 s")


def measure(runs: int) -> dict[str, float | str]:
    with tempfile.TemporaryDirectory(prefix="noma-bench-") as tmp:
        ws = Path(tmp) / "ws"
        _make_workspace(ws)
        env = _user_dirs(Path(tmp), ws)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "core.cli",
                "skills",
                "serve",
                "--port",
                str(port),
                "--workspace",
                str(ws),
                "--log-level",
                "warning",
            ],
            cwd=Path(__file__).resolve().parents[1],
            env={**os.environ, **env},
        )
        try:
            with httpx.Client(timeout=60) as client:
                health = _wait_ready(client, base, server, env)
                payload = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "execute_skill",
                    "params": {"name": "bench.noop"},
                }
                rpc: list[float] = []
                bare: list[float] = []
                bare_isolated: list[float] = []
                for i in range(runs + 5):
                    t0 = time.perf_counter()
                    reply = client.post(f"{base}/rpc", json=payload).json()
                    call_s = time.perf_counter() - t0
                    # Let the server start the next sandbox (off the call's path, not off
                    # the CPU) before the bare spawns, so they are not slowed by it.
                    time.sleep(SETTLE_S)
                    t1 = time.perf_counter()
                    subprocess.run([SANDBOX_PYTHON, "-c", "pass"], check=True)
                    t2 = time.perf_counter()
                    subprocess.run([SANDBOX_PYTHON, "-I", "-S", "-c", "pass"], check=True)
                    t3 = time.perf_counter()
                    if reply.get("result", {}).get("status") != "completed":
                        raise SystemExit(f"execute_skill failed: {json.dumps(reply)[:500]}")
                    if i >= 5:  # warm-up: first runs fill caches on both sides
                        rpc.append(call_s)
                        bare.append(t2 - t1)
                        bare_isolated.append(t3 - t2)
                    time.sleep(0.02)
        finally:
            server.terminate()
            server.wait(timeout=30)
    rpc_ms = statistics.median(rpc) * 1000
    bare_ms = statistics.median(bare) * 1000
    isolated_ms = statistics.median(bare_isolated) * 1000
    p95_ms = statistics.quantiles(rpc, n=20)[-1] * 1000 if len(rpc) >= 2 else rpc_ms
    return {
        "tier": str(health.get("sandbox", {}).get("tier")),
        "execute_skill_median_ms": round(rpc_ms, 2),
        "execute_skill_p95_ms": round(p95_ms, 2),
        "bare_python_median_ms": round(bare_ms, 2),
        "bare_python_isolated_median_ms": round(isolated_ms, 2),
        "ratio": round(rpc_ms / isolated_ms, 2),
        "ratio_with_site": round(rpc_ms / bare_ms, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--check", action="store_true", help=f"exit 1 above {TARGET_RATIO}x")
    args = parser.parse_args(argv)
    result = measure(args.runs)
    print(f"isolation tier:                 {result['tier']}")
    print(f"execute_skill round trip median: {result['execute_skill_median_ms']:.2f} ms")
    print(f"execute_skill round trip p95:    {result['execute_skill_p95_ms']:.2f} ms")
    print(f"bare `{SANDBOX_PYTHON} -c pass` median: {result['bare_python_median_ms']:.2f} ms")
    print(
        f"bare `{SANDBOX_PYTHON} -I -S -c pass` median: "
        f"{result['bare_python_isolated_median_ms']:.2f} ms"
    )
    print(f"ratio to `-c pass`: {result['ratio_with_site']:.2f}x")
    verdict = "met" if float(result["ratio"]) <= TARGET_RATIO else "NOT met"
    print(
        f"ratio to `-I -S -c pass`: {result['ratio']:.2f}x (target <= {TARGET_RATIO:g}x: {verdict})"
    )
    return 1 if args.check and verdict != "met" else 0


if __name__ == "__main__":
    sys.exit(main())
