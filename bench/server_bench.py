"""Which ASGI server holds up best under slow clients (issue 24 item 2): uvicorn with the
guards of ``core/netauth/serving.py`` against hypercorn and granian, one worker each, on the
same hub app.

Two figures per server: plain throughput of the hub's ``GET /api/v1/flow-runs`` (4 client
threads, keep-alive) and a token holder's requests per second while 1,000 half-open
tokenless connections are held (p50/p95 latency for both). hypercorn and granian are not
dependencies: ``.venv/bin/pip install hypercorn granian`` before running
``.venv/bin/python -m bench.server_bench``. The XDG dirs point into a temporary folder, so
no real token or state is touched.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
HALF_OPEN = 1000
SOURCES = [f"127.0.0.{n}" for n in range(2, 8)]  # under the per-client cap of 256
HEAD = b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def app_from_env() -> Any:
    """The app ``noma serve`` runs, on the workspace in ``NOMA_BENCH_WS`` (a factory, so
    hypercorn and granian can import it)."""
    from core.hub.app import Hub, create_hub_app
    from core.netauth.bind import HostPolicy
    from core.netauth.local_token import load_or_create_local_token
    from core.skills_runtime.app import create_app
    from core.skills_runtime.service import SkillsRuntime

    root = Path(os.environ["NOMA_BENCH_WS"])
    hub = Hub.open(root)
    runtime = SkillsRuntime(root)
    hosts = HostPolicy.for_bind("127.0.0.1", [])
    return create_hub_app(
        hub, create_app(runtime), hosts=hosts, local_token=load_or_create_local_token()
    )


def _uvicorn_main(port: int) -> None:
    from core.netauth import serving

    serving.run(app_from_env(), host="127.0.0.1", port=port, log_level="warning")


def _command(server: str, port: int) -> list[str]:
    py = sys.executable
    factory = "bench.server_bench:app_from_env"
    if server == "uvicorn":
        return [py, "-c", f"from bench.server_bench import _uvicorn_main; _uvicorn_main({port})"]
    if server == "hypercorn":
        return [py, "-m", "hypercorn", f"{factory}()", "--bind", f"127.0.0.1:{port}",
                "--workers", "1", "--log-level", "warning", "--read-timeout", "60"]  # fmt: skip
    return [py, "-m", "granian", "--interface", "asgi", "--factory", factory, "--host",
            "127.0.0.1", "--port", str(port), "--workers", "1", "--log-level", "warning",
            "--no-ws"]  # fmt: skip


def _token() -> str:
    from core.netauth.local_token import read_local_token

    token = read_local_token()
    assert token is not None
    return token


def _hammer(url: str, seconds: float, threads: int) -> tuple[float, list[float]]:
    """Requests per second and each request's latency, over ``threads`` keep-alive clients."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    headers = {"Authorization": f"Bearer {_token()}"}
    errors: list[str] = []

    def worker(mine: list[float]) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                start = time.perf_counter()
                r = http.get("/api/v1/flow-runs")
                mine.append(time.perf_counter() - start)
                if r.status_code != 200:
                    errors.append(str(r.status_code))

    pool = [threading.Thread(target=worker, args=(mine,)) for mine in latencies]
    begin = time.monotonic()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.monotonic() - begin
    assert not errors, errors[:5]
    flat = sorted(x for mine in latencies for x in mine)
    return len(flat) / elapsed, flat


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def _measure(server: str, root: Path) -> dict[str, float]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        _command(server, port), cwd=REPO, env={**os.environ, "NOMA_BENCH_WS": str(root),
        "NOMA_SERVER_HEADER_TIMEOUT": "120"}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"{server} exited"
            try:
                if httpx.get(f"{url}/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.1)
        _hammer(url, 0.5, 1)  # warm up
        rps, lat = _hammer(url, 4.0, 4)
        quiet1, _ = _hammer(url, 2.0, 1)
        for n in range(HALF_OPEN):
            s = socket.create_connection(
                ("127.0.0.1", port), timeout=10, source_address=(SOURCES[n % len(SOURCES)], 0)
            )
            s.sendall(HEAD)
            held.append(s)
        slow_rps, slow_lat = _hammer(url, 4.0, 1)
        alive = 0
        for s in held:
            s.setblocking(False)
            try:
                alive += s.recv(1) != b""
            except BlockingIOError:
                alive += 1
            except ConnectionResetError:
                pass
        return {
            "rps_4_clients": rps,
            "p50_ms": _pct(lat, 0.5),
            "p95_ms": _pct(lat, 0.95),
            "rps_1_client_quiet": quiet1,
            "rps_1_client_1000_half_open": slow_rps,
            "slow_p50_ms": _pct(slow_lat, 0.5),
            "slow_p95_ms": _pct(slow_lat, 0.95),
            "half_open_still_held": alive,
        }
    finally:
        for s in held:
            s.close()
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, hard), hard))
    servers = sys.argv[1:] or ["uvicorn", "hypercorn", "granian"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
            path = Path(tmp) / name
            path.mkdir(mode=0o700)
            os.environ[name] = str(path)
        sys.path.insert(0, str(REPO))
        from tests.flow.conftest import make_workspace

        root = make_workspace(Path(tmp) / "ws")
        for server in servers:
            figures = _measure(server, root)
            print(server, " ".join(f"{k}={v:.1f}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()
