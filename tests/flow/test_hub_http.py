"""The hub over real HTTP: a uvicorn server on 127.0.0.1 (a free port, bound before the
server starts) in a thread, driven by httpx clients.

Security tier: no / wrong / revoked token is one bare 401; another scope's run is the
same 404 as a missing one; no token, consent id or raw actor in any response, log line or
database row. Stress tier: 8 clients x 100 writes on 50 shared runs (optimistic
concurrency through If-Match) lose no update and see monotonic etags; parallel execute
posts return one execution_id and charge the consent exactly once.
"""

from __future__ import annotations

import logging
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from core.flow import FlowContext, execute
from core.flow.actions import run_action
from core.flow.lanes import ProviderLane
from core.hub.app import Hub, create_hub_app
from core.netauth.tokens import token_store_path
from core.workspace import Workspace
from tests.server_testlib import launch

from .conftest import (
    SHEET_URL,
    FakeLane,
    automatable_bundle,
    bundle,
    make_workspace,
    owner_headers,
    starter_bundle,
    step,
    store_bytes,
)

pytestmark = pytest.mark.usefixtures("both_stores")

WR = "/api/v1/flows/flow_weekly_review/runs"
LEAD = "/api/v1/flows/flow_lead_import/runs"
GRACE = "grace.hopper@example.org"


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextmanager
def serving(hub: Hub) -> Iterator[tuple[str, Lines]]:
    """The hub on 127.0.0.1:<free port>, its uvicorn log lines captured."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this: without it each response waits on delayed ACKs.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    lines = Lines()
    loggers = [logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access")]
    for lg in loggers:
        lg.addHandler(lines)
        lg.setLevel(logging.DEBUG)
    config = uvicorn.Config(
        create_hub_app(hub), log_config=None, log_level="debug", access_log=True, lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", lines
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
        for lg in loggers:
            lg.removeHandler(lines)


def lanes(lane: FakeLane) -> dict[str, Any]:
    return {"local_default": lane, "cloud_premium": ProviderLane("cloud_premium")}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# ----------------------------------------------------------------------------- security


def test_security_tier_over_http(tmp_path: Path) -> None:
    org = bundle("flow_org_wide", [step("flow_org_wide", 1)], scope="org")
    root = make_workspace(
        tmp_path / "ws",
        bundles=[starter_bundle(), automatable_bundle(), org],
        policy={"scopes": ["personal", "project", "org"]},
    )
    hub = Hub.open(root, require_tokens=True, lanes=lanes(FakeLane()))
    grace, _ = hub.tokens.create(GRACE, "org", human=True)
    mallory, _ = hub.tokens.create("mallory", "org", human=True)
    narrow, _ = hub.tokens.create("pat", "personal", human=True)
    revoked, row = hub.tokens.create("old-bot", "org")
    hub.tokens.revoke(row.token_id)
    bodies: list[bytes] = []
    headers: list[str] = []
    try:
        with serving(hub) as (url, logs), httpx.Client(base_url=url, timeout=30) as http:

            def call(method: str, path: str, token: str | None, **kw: Any) -> httpx.Response:
                h = auth(token) if token is not None else {}
                r = http.request(method, path, headers=h, **kw)
                bodies.append(r.content)
                headers.append(repr(sorted(r.headers.items())))
                return r

            started = call("POST", WR, grace, json={"flow_version": "1.0.0"})
            assert started.status_code == 201
            rid = started.json()["run"]["run_id"]
            org_run = call(
                "POST", "/api/v1/flows/flow_org_wide/runs", grace, json={"flow_version": "1.0.0"}
            ).json()["run"]["run_id"]
            wrong = grace[:-3] + ("xyz" if not grace.endswith("xyz") else "abc")
            denied = [
                call("GET", f"{WR}/{rid}", None),
                call("GET", f"{WR}/{rid}", wrong),
                call("GET", f"{WR}/{rid}", revoked),
                call("GET", f"{WR}/{rid}", "nhub_" + "0" * 12 + "_" + "A" * 43),
                call("POST", f"{WR}/{rid}/advance", None, json={}),
                call("POST", "/rpc", None, json={"jsonrpc": "2.0", "id": 1, "method": "x"}),
            ]
            assert {r.status_code for r in denied} == {401}
            assert len({r.content for r in denied}) == 1
            assert denied[0].json() == {"ok": False, "status": 401, "error": "unauthorized"}

            def no_date(r: httpx.Response) -> dict[str, str]:
                return {k: v for k, v in r.headers.items() if k != "date"}

            missing = call("GET", f"{WR}/run_nosuchrun", mallory)
            others = [
                call("GET", f"{WR}/{rid}", mallory),  # another person's personal run
                call("GET", f"/api/v1/flow-runs/{org_run}", narrow),  # a wider scope's run
                call(
                    "POST",
                    f"{WR}/{rid}/advance",
                    mallory,
                    json={"step_id": "flow_weekly_review#1", "to_status": "blocked"},
                ),
                call(
                    "POST",
                    f"/api/v1/flows/flow_org_wide/runs/{org_run}/evidence",
                    narrow,
                    json={
                        "step_id": "flow_org_wide#1",
                        "evidence_ref": "x1",
                        "pointer_kind": "artifact",
                    },
                ),
            ]
            for r in others:
                assert r.status_code == 404 and r.content == missing.content
                assert no_date(r) == no_date(missing)
            assert rid not in {x["run_id"] for x in call("GET", WR, mallory).json()["runs"]}

            consent_run = call(
                "POST",
                LEAD,
                grace,
                json={"flow_version": "1.0.0", "inputs": {"sheet_url": SHEET_URL}},
            ).json()["run"]["run_id"]
            minted = http.post(
                f"{LEAD}/{consent_run}/consent",
                headers=auth(grace),
                json={"allowed_lanes": ["local_default"], "cost_cap_units": 9},
            )
            assert minted.status_code == 201
            cid = minted.json()["consent"]["consent_id"]  # handed once, to its owner
            executed = call(
                "POST",
                f"{LEAD}/{consent_run}/execute-automatable",
                grace,
                json={"step_id": "flow_lead_import#1", "consent_id": cid},
            )
            assert executed.json()["execution"]["status"] == "completed"
            assert cid.encode() not in executed.content
            log_text = "\n".join(logs.lines)
            assert "GET /api/v1/flows/flow_weekly_review/runs" in log_text  # it did log
    finally:
        hub.close()
    secrets_ = [grace, mallory, narrow, revoked]
    for body, head in zip(bodies, headers, strict=True):
        for s in [*secrets_, GRACE, "mallory", cid]:
            assert s.encode() not in body, s
            assert s not in head
    for s in [*secrets_, GRACE, cid, "grace"]:
        assert s not in log_text, s
    conn = sqlite3.connect(token_store_path(Workspace.open(root).root))
    try:
        tokens_dump = "\n".join(conn.iterdump())
    finally:
        conn.close()
    runs_dump = store_bytes(root).decode("utf-8", "replace")  # SQLite file or PG rows
    assert rid in runs_dump  # the run store was really read
    for dump in (tokens_dump, runs_dump):
        for s in [*secrets_, cid]:
            assert s not in dump
    # Only the token table names the actor a token is for; the run store never does.
    assert "grace" not in runs_dump and "mallory" not in runs_dump


# ------------------------------------------------------------------------------- stress

CLIENTS = 8
WRITES = 100
RUNS = 50


@pytest.mark.long(10)
def test_stress_tier_over_http_loses_no_update(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    hub = Hub.open(root, lanes=lanes(FakeLane()))
    try:
        with serving(hub) as (url, _):
            with httpx.Client(base_url=url, headers=owner_headers(), timeout=60) as http:
                runs = [
                    http.post(WR, json={"flow_version": "1.0.0"}).json()["run"]["run_id"]
                    for _ in range(RUNS)
                ]
            seen: dict[int, list[tuple[str, str, int, str]]] = {}
            failures: list[BaseException] = []

            def client(n: int) -> None:
                out: list[tuple[str, str, int, str]] = []
                try:
                    with httpx.Client(base_url=url, headers=owner_headers(), timeout=120) as http:
                        for i in range(WRITES):
                            rid = runs[(n * 13 + i * 7) % RUNS]
                            base = f"{WR}/{rid}"
                            if i % 2 == 0:  # unconditional evidence: always a new revision
                                r = http.post(
                                    f"{base}/evidence",
                                    json={
                                        "step_id": "flow_weekly_review#1",
                                        "evidence_ref": f"c{n}_{i}",
                                        "pointer_kind": "artifact",
                                    },
                                )
                            else:  # read, then flip the step under If-Match
                                run = http.get(base).json()["run"]
                                now = run["step_states"][0]["status"]
                                to = "blocked" if now != "blocked" else "in_progress"
                                r = http.post(
                                    f"{base}/advance",
                                    json={"step_id": "flow_weekly_review#1", "to_status": to},
                                    headers={"If-Match": f'"{run["etag"]}"'},
                                )
                            body = r.json()
                            code = body.get("code", "")
                            etag = body["run"]["etag"] if "run" in body else ""
                            out.append((rid, etag, r.status_code, code))
                except BaseException as exc:  # surfaced below
                    failures.append(exc)
                seen[n] = out

            threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)
            assert not failures, failures
            with httpx.Client(base_url=url, headers=owner_headers(), timeout=60) as http:
                final = {rid: http.get(f"{WR}/{rid}").json()["run"] for rid in runs}
    finally:
        hub.close()
    per_run: dict[str, list[int]] = {rid: [] for rid in runs}
    for n, out in seen.items():
        assert len(out) == WRITES
        last: dict[str, int] = {}
        for rid, etag, status, code in out:
            if status == 200:
                rev = int(etag[1:])
                per_run[rid].append(rev)
                assert rev > last.get(rid, 0), (n, rid, rev)  # monotonic per client
                last[rid] = rev
            else:  # the only refusal: someone else wrote between this read and write
                assert (status, code) == (409, "FLOW_RUN_CONFLICT"), (status, code)
    total = 0
    for rid, revs in per_run.items():
        final_rev = int(final[rid]["etag"][1:])
        # Every success made exactly one revision, and no two successes made the same one.
        assert sorted(revs) == list(range(2, final_rev + 1)), rid
        total += len(revs)
    assert total >= CLIENTS * WRITES // 2  # every unconditional write succeeded


def test_parallel_execute_posts_return_one_execution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lane is released only once every other post is waiting on the one in flight, so
    # the in-flight path is what answers them (a condition, whatever the machine's load).
    waiting = threading.Semaphore(0)
    await_in_flight = execute._await_in_flight

    def counted(ctx: FlowContext, execution: Any) -> dict[str, Any]:
        waiting.release()
        return await_in_flight(ctx, execution)

    monkeypatch.setattr(execute, "_await_in_flight", counted)
    root = make_workspace(tmp_path / "ws")
    lane = FakeLane(gate=threading.Event())
    hub = Hub.open(root, lanes=lanes(lane))
    token, _ = hub.tokens.create("ada@example.org", human=True)
    try:
        with (
            serving(hub) as (url, _),
            httpx.Client(base_url=url, headers=owner_headers(), timeout=60) as http,
        ):
            h = auth(token)
            rid = http.post(
                LEAD, headers=h, json={"flow_version": "1.0.0", "inputs": {"sheet_url": SHEET_URL}}
            ).json()["run"]["run_id"]
            cid = http.post(
                f"{LEAD}/{rid}/consent",
                headers=h,
                json={
                    "allowed_lanes": ["local_default"],
                    "cost_cap_units": 20,
                },
            ).json()["consent"]["consent_id"]
            body = {"step_id": "flow_lead_import#1", "consent_id": cid}
            answers: list[dict[str, Any]] = []
            lock = threading.Lock()

            def post() -> None:
                with httpx.Client(base_url=url, headers=owner_headers(), timeout=60) as c:
                    r = c.post(f"{LEAD}/{rid}/execute-automatable", json=body, headers=h)
                with lock:
                    answers.append(r.json())

            threads = [threading.Thread(target=post) for _ in range(CLIENTS)]
            for t in threads:
                t.start()
            for _ in range(CLIENTS - 1):
                assert waiting.acquire(timeout=60), "a post never reached the in-flight wait"
            assert lane.gate is not None
            lane.gate.set()
            for t in threads:
                t.join(60)
    finally:
        hub.close()
    assert len(answers) == CLIENTS
    ids_ = set()
    for a in answers:
        assert a.get("ok") is not False, a
        ids_.add(a["execution"]["execution_id"])
    assert len(ids_) == 1
    assert len(lane.calls) == 1
    ctx = FlowContext.open(Workspace.open(root), lanes=lanes(FakeLane()))
    try:
        consents = run_action(ctx, "consents", {"run_id": rid})
    finally:
        ctx.close()
    assert isinstance(consents, dict)
    [consent] = consents["consents"]
    assert consent["cost_consumed_units"] == lane.cost  # charged exactly once


# ------------------------------------------------------------------------------ README

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Running a team hub", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_example_starts_a_run_and_advances_it(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = make_workspace(tmp_path / "ws")
    hub = Hub.open(root, require_tokens=True, lanes=lanes(FakeLane()))
    token, _ = hub.tokens.create("ada@example.org", human=True)
    try:
        with serving(hub) as (url, _):
            env = {**os.environ, "NOMA_HUB_URL": url, "NOMA_HUB_TOKEN": token}
            proc = subprocess.run(
                [sys.executable, "-c", readme_example()],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
    finally:
        hub.close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == 'in_progress "r2"'


# ------------------------------------------------------------------- noma serve itself


def test_noma_serve_serves_rest_and_rpc_on_one_port(tmp_path: Path) -> None:
    """The real command: REST, the Skills /rpc and the docs from one process; a public
    address with a token in the table starts and then asks every caller for one."""
    import subprocess
    import sys

    root = make_workspace(tmp_path / "ws")
    hub = Hub.open(root)
    token, _ = hub.tokens.create("ada@example.org", human=True)
    hub.close()
    served = launch(
        [sys.executable, "-m", "core.cli", "serve", "--host", "0.0.0.0",
         "--workspace", str(root), "--log-level", "warning"],
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    proc, url = served.proc, served.url
    try:
        said = f"noma serve: listening on http://0.0.0.0:{served.port}"
        assert said in [line.rstrip("\n") for line in served.lines]
        # It listens (`launch` read the line): its first answers are the real ones.
        assert httpx.get(f"{url}/openapi.json", timeout=30).status_code == 200
        assert httpx.get(f"{url}/api/v1/flows").status_code == 401  # no caller is token-less
        with httpx.Client(base_url=url, headers=auth(token), timeout=30) as http:
            assert http.get("/api/v1/flows").json()["schema"] == "noma.flow_list/v0"
            started = http.post(WR, json={"flow_version": "1.0.0"})
            assert started.status_code == 201
            rpc = http.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "list_skills"})
            assert rpc.status_code == 200 and "result" in rpc.json()
            assert "Noma team hub" in http.get("/docs").text
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
