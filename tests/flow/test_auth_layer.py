"""One authentication layer (issue 24 item 1), tried as an attacker would.

- a web page the owner visits: a cross-site ``text/plain`` POST to ``/rpc`` (no token, it
  has none) and a DNS-rebound ``Host`` are refused on ``noma serve`` and on ``noma skills
  serve`` alike, and nothing is created or run;
- another local user (uid 65534, run through ``setpriv``) cannot read the owner's token file
  and gets the bare 401 for listing runs, starting one, creating and running a skill on a
  loopback server;
- ``noma skills serve --host 0.0.0.0`` with no token for others refuses to start;
- the token file is private and a planted one (a symlink, a world-readable file) is never
  used; the app sends the owner's token to a loopback hub only.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from core import cli
from core.hub.app import Hub, create_hub_app
from core.netauth import local_token
from core.netauth.bind import HostPolicy, host_name
from core.netauth.local_token import (
    load_or_create_local_token,
    read_local_token,
    token_path,
)
from core.netauth.tokens import TokenStore
from core.workspace import Workspace
from tests.server_testlib import launch

from .conftest import make_workspace, owner_headers

REPO = Path(__file__).resolve().parents[2]
WR = "/api/v1/flows/flow_weekly_review/runs"
IS_ROOT = os.geteuid() == 0
NOBODY = 65534
UNAUTHORIZED = {"ok": False, "status": 401, "error": "unauthorized"}
CREATE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "create_skill",
    "params": {
        "manifest": {
            "name": "user.ops.pwn",
            "version": "0.1.0",
            "kind": "action",
            "description": "x",
            "runtime": {"language": "python", "entrypoint": "code/main.py"},
        },
        "skill_md": "x",
        "files": [{"path": "code/main.py", "content": "def main(a):\n    return 1\n"}],
    },
}
RUN = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "run_code",
    "params": {"language": "python", "code": "def main(a):\n    return 1\n"},
}


@contextmanager
def serving(argv: list[str], root: Path) -> Iterator[str]:
    """The real command on a free loopback port; yields its URL once the owner is served."""
    served = launch(
        [sys.executable, "-m", "core.cli", *argv, "--workspace", str(root),
         "--log-level", "warning"],
        cwd=REPO,
    )  # fmt: skip
    proc, url = served.proc, served.url
    try:
        # It listens (`launch` read the line), and it wrote the owner's token before that.
        token = read_local_token()
        assert token is not None, served.stderr_text()
        answer = httpx.get(
            f"{url}/openapi.json" if argv[0] == "serve" else f"{url}/healthz",
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert answer.status_code == 200, served.stderr_text()
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _page_attacks(url: str) -> list[httpx.Response]:
    """What a page in the owner's browser can send: simple cross-site POSTs without a
    token, and anything at all once its own name resolves to 127.0.0.1 (rebinding)."""
    port = url.rsplit(":", 1)[1]
    body = json.dumps(CREATE).encode()
    out = []
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        out.append(
            httpx.post(
                f"{url}/rpc",
                content=body,
                headers={"Content-Type": ctype, "Origin": "http://evil.example"},
            )
        )
    out.append(httpx.post(f"{url}/rpc", content=json.dumps(RUN).encode()))  # no content type
    rebound = {"Host": f"evil.example:{port}", "Content-Type": "application/json"}
    out.append(httpx.post(f"{url}/rpc", content=body, headers=rebound))
    out.append(httpx.get(f"{url}{WR}", headers={"Host": f"evil.example:{port}"}))
    return out


def test_a_web_page_cannot_create_or_run_skills_on_noma_skills_serve(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    ops, _ = TokenStore.for_workspace(Workspace.open(root).root).create("ops")
    with serving(["skills", "serve"], root) as url:
        answers = _page_attacks(url)
        assert [r.status_code for r in answers] == [401, 401, 401, 401, 421, 421]
        assert answers[0].json() == UNAUTHORIZED
        assert answers[-1].json() == {"ok": False, "status": 421, "error": "host_not_allowed"}
        # Even with the owner's token (a page cannot have it), a text/plain body is refused.
        typed = httpx.post(
            f"{url}/rpc",
            content=json.dumps(RUN).encode(),
            headers={**owner_headers(), "Content-Type": "text/plain"},
        )
        assert typed.status_code == 415
        assert httpx.get(f"{url}/healthz").status_code == 401  # no tokenless route
        ok = httpx.post(
            f"{url}/rpc", json={**CREATE, "id": 9}, headers={"Authorization": f"Bearer {ops}"}
        )
        assert ok.status_code == 200 and "result" in ok.json(), ok.text
    created = root / ".noma-workbench" / "created-skills"
    assert [p.name for p in created.iterdir() if not p.name.startswith(".")] == [
        "user.ops.pwn@0.1.0"  # only the call made with ops's own token
    ]


def test_a_web_page_cannot_act_on_noma_serve(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    with serving(["serve"], root) as url:
        answers = _page_attacks(url)
        assert [r.status_code for r in answers] == [401, 401, 401, 401, 421, 421]
        runs = httpx.get(f"{url}{WR}", headers=owner_headers()).json()["runs"]
        assert runs == []
        docs = httpx.get(f"{url}/openapi.json")  # the route docs stay public, Host-checked
        assert docs.status_code == 200
        port = url.rsplit(":", 1)[1]
        foreign = httpx.get(f"{url}/openapi.json", headers={"Host": f"evil.example:{port}"})
        assert foreign.status_code == 421
    assert not (root / ".noma-workbench" / "created-skills").exists()


NOBODY_SCRIPT = r"""
import json, sys, urllib.request, urllib.error
url, token_file = sys.argv[1], sys.argv[2]
out = {}
try:
    open(token_file).read()
    out["token_file"] = "read"
except OSError as exc:
    out["token_file"] = type(exc).__name__
def call(method, path, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    h = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(url + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        return [e.code, e.read().decode()]
guess = {"Authorization": "Bearer nloc_" + "A" * 43}
out["list"] = call("GET", "/api/v1/flow-runs")
out["start"] = call("POST", "/api/v1/flows/flow_weekly_review/runs", {"flow_version": "1.0.0"})
out["create"] = call("POST", "/rpc", CREATE)
out["run"] = call("POST", "/rpc", RUN)
out["guess"] = call("GET", "/api/v1/flow-runs", headers=guess)
print(json.dumps(out))
"""


@pytest.mark.skipif(not IS_ROOT, reason="needs root to run a client as uid 65534 (CI is root)")
def test_another_local_user_cannot_reach_a_loopback_server(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    with serving(["serve"], root) as url:
        owner = owner_headers()
        mine = httpx.post(f"{url}{WR}", json={"flow_version": "1.0.0"}, headers=owner)
        assert mine.status_code == 201  # the owner's own personal run
        script = f"CREATE = {CREATE!r}\nRUN = {RUN!r}\n" + NOBODY_SCRIPT
        # The owner's runtime dir is 0700, the token file 0600: open it up to the token file
        # itself (as a careless parent dir would) to show the file's own mode holds too.
        folder, runtime = token_path().parent, Path(os.environ["XDG_RUNTIME_DIR"])
        os.chmod(folder, 0o755)
        os.chmod(runtime, 0o755)
        parents = [p for p in runtime.parents if p != Path("/")]
        modes = {p: p.stat().st_mode & 0o777 for p in parents}
        for p in parents:
            os.chmod(p, modes[p] | 0o005)
        try:
            done = subprocess.run(
            ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
             "/usr/bin/python3", "-I", "-c", script, url, str(folder / "server-token")],
            capture_output=True, text=True, timeout=120, cwd="/",
            )  # fmt: skip
        finally:
            for p in parents:
                os.chmod(p, modes[p])
            os.chmod(runtime, 0o700)
            os.chmod(folder, 0o700)
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["token_file"] == "PermissionError"
        for what in ("list", "start", "create", "run", "guess"):
            status, body = seen[what]
            assert status == 401 and json.loads(body) == UNAUTHORIZED, (what, seen[what])
        runs = httpx.get(f"{url}/api/v1/flow-runs", headers=owner).json()["runs"]
        assert [r["run_id"] for r in runs] == [mine.json()["run"]["run_id"]]
    assert not (root / ".noma-workbench" / "created-skills").exists()


def test_a_public_bind_without_a_token_for_others_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path / "ws")
    for argv in (["skills", "serve"], ["serve"]):
        rc = cli.main([*argv, "--host", "0.0.0.0", "--port", "0", "--workspace", str(root)])
        assert rc == 2
        assert "refusing to bind 0.0.0.0 without tokens" in capsys.readouterr().err
    assert read_local_token() is None  # the owner's token does not count for others


def test_the_token_file_is_private_and_a_planted_one_is_never_used(tmp_path: Path) -> None:
    path = token_path()
    assert path.parent == Path(os.environ["XDG_RUNTIME_DIR"]) / "noma-workbench"
    token = load_or_create_local_token()
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert load_or_create_local_token() == token == read_local_token()  # stable per session
    # A world-readable token (someone else may know it) is replaced, not used.
    os.chmod(path, 0o644)
    assert read_local_token() is None
    fresh = load_or_create_local_token()
    assert fresh != token and path.stat().st_mode & 0o777 == 0o600
    # A symlink to a token the attacker wrote is not followed, and is replaced.
    known = tmp_path / "known"
    known.write_text("nloc_" + "K" * 43 + "\n")
    known.chmod(0o600)
    path.unlink()
    path.symlink_to(known)
    assert read_local_token() is None
    replaced = load_or_create_local_token()
    assert replaced != "nloc_" + "K" * 43 and not path.is_symlink()
    assert known.read_text() == "nloc_" + "K" * 43 + "\n"  # the target was not written
    # Garbage in the file is not a token.
    path.write_text("nloc_short\n")
    assert read_local_token() is None


def test_a_foreign_runtime_dir_falls_back_to_the_state_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_dir = tmp_path / "shared-run"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(open_dir))
    assert local_token.token_dir() == Path(os.environ["XDG_STATE_HOME"]) / "noma-workbench"
    load_or_create_local_token()
    assert not list(open_dir.iterdir())


def test_the_gate_answers_every_malformed_credential_alike(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    hub = Hub.open(root)
    try:
        app = create_hub_app(hub)
        token = read_local_token()
        assert token is not None
        client = TestClient(app, base_url="http://127.0.0.1:8765")
        basic = base64.b64encode(f"anyone:{token}".encode()).decode()
        assert client.get(WR, headers={"Authorization": f"Basic {basic}"}).status_code == 200
        bad = [
            {"Authorization": f"Basic {base64.b64encode(b'anyone:nope').decode()}"},
            {"Authorization": f"Basic {token}"},
            {"Authorization": f"Token {token}"},
            {"Authorization": f"Bearer {token}x"},
            {"Authorization": "Bearer " + "A" * 5000},
        ]
        answers = [client.get(WR, headers=h) for h in bad]
        twice = client.get(
            WR, headers=[("Authorization", f"Bearer {token}"), ("Authorization", "Bearer x")]
        )
        answers.append(twice)
        assert {r.status_code for r in answers} == {401}
        assert len({r.content for r in answers}) == 1
        hosts = client.get(
            WR,
            headers=[
                ("Host", "127.0.0.1:8765"),
                ("Host", "evil.example"),
                *owner_headers().items(),
            ],
        )
        assert hosts.status_code == 421
    finally:
        hub.close()


def test_host_policy_names() -> None:
    assert host_name("[::1]:8080") == "::1" and host_name("LocalHost.:80") == "localhost"
    loop = HostPolicy.for_bind("127.0.0.1")
    assert loop.allows("127.0.0.1:1") and loop.allows("localhost") and loop.allows("[::1]:9")
    assert not loop.allows("evil.example") and not loop.allows(None) and not loop.allows("")
    assert not loop.allows("127.0.0.1.evil.example")
    proxy = HostPolicy.for_bind("127.0.0.1", ["hub.example.org"])
    assert proxy.allows("hub.example.org:443") and not proxy.allows("other.example.org")
    assert HostPolicy.for_bind("0.0.0.0").allows("anything.example")
    assert not HostPolicy.for_bind("0.0.0.0", ["hub.example.org"]).allows("x.example")


def test_the_app_sends_the_owners_token_to_a_loopback_hub_only() -> None:
    from core.hub.client import token_for

    token = load_or_create_local_token()
    assert token_for("http://127.0.0.1:8765", "") == token
    assert token_for("http://localhost:8765", "") == token
    for url in (
        "http://hub.example.org:8765",
        "http://127.0.0.1.evil.example:80",
        "http://127.0.0.1@evil.example/",
        "ftp://127.0.0.1/",
    ):
        assert token_for(url, "") == "", url


def test_noma_hub_token_local_prints_the_owners_token(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["hub", "token", "local"]) == 2  # no server made one yet
    token = load_or_create_local_token()
    capsys.readouterr()
    assert cli.main(["hub", "token", "local"]) == 0
    assert capsys.readouterr().out.strip() == token
