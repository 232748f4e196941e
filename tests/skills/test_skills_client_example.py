"""Acceptance: the spec's Python client example, run unchanged, completes every step.

The code is taken byte for byte from the spec (shared/spec/skills-protocol-v0.1.txt) and
executed as is. Its client posts to the spec's default endpoint ``localhost:8080``; the
test gives it a ``requests`` module whose ``post`` sends that endpoint to the test server's
free port (real ``requests`` when installed, else an httpx-backed stand-in with the same
``post(url, json=...)`` / ``.json()`` surface), so nothing in the example is edited. Every
server asks for a token: the stand-in carries the owner's, and the script form finds it in a
``.netrc`` (``NETRC``), as the real ``requests`` does for any client.
"""

from __future__ import annotations

import io
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import httpx
from skills_testlib import Server, spec_text

SPEC_ENDPOINT = "http://localhost:8080/rpc"


def example_code() -> str:
    text = spec_text()
    start = text.index("import requests\n")
    end = text.index("This example demonstrates:")
    return text[start:end]


def requests_for(server: Server) -> types.ModuleType:
    try:
        import requests as real  # type: ignore[import-untyped]
    except ImportError:
        real = None
    module = types.ModuleType("requests")

    def post(url: str, json: Any = None, **kwargs: Any) -> Any:
        assert url == SPEC_ENDPOINT, url
        target = f"{server.base}/rpc"
        headers = {"Authorization": server.client.headers["Authorization"]}
        if real is not None:
            return real.post(target, json=json, timeout=120, headers=headers, **kwargs)
        return httpx.post(target, json=json, timeout=120, headers=headers)

    module.post = post  # type: ignore[attr-defined]
    return module


def test_spec_client_example_completes_every_step(server: Server, monkeypatch: Any) -> None:
    code = example_code()
    assert "client = SkillsRuntimeClient()" in code  # the spec's default endpoint, unchanged
    monkeypatch.setitem(sys.modules, "requests", requests_for(server))
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "skills-protocol-v0.1-client-example", "exec"), {"__name__": "__main__"})
    printed = out.getvalue()
    # 1. the guide; 2. discovery; 3. describe; 4. docs; 5. blob; 6. execute; 7. run_code
    assert "# Skills Protocol Overview" in printed
    assert "Found 1 Salesforce skills" in printed
    assert "Skill: Sync leads from a sheet blob into Salesforce." in printed
    assert "# Salesforce Lead Sync" in printed
    assert re.search(r"Created blob: blob:[0-9a-f]{32}", printed)
    assert "Success: Synced 1 leads (1 failed)." in printed
    assert "'updated_count': 1" in printed
    assert "Failed:" not in printed
    assert "Custom workflow result: {'synced': 4, 'errors': [{'row': 6," in printed


@contextmanager
def _port_claimed(port: int, wait: float = 600.0) -> Iterator[None]:
    """Hold this host's claim on ``port`` for the tests of every checkout on it.

    Two suites on one host (a load proof runs three) would otherwise both find the port
    free, both start a server, and one server would exit on ``address already in use``.
    The claim is an advisory lock on a file in the shared temporary folder, waited for
    (the other test holds it for seconds) and released when its holder exits, however.
    """
    import fcntl
    import tempfile
    import time

    path = Path(tempfile.gettempdir()) / f"noma-tests-port-{port}.lock"
    with open(path, "a") as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, f"port {port} stayed claimed by another suite"
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _port_free(port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_spec_client_example_as_a_script_against_noma_skills_serve_on_8080(tmp_path: Any) -> None:
    """Strictest form: the real CLI server on the spec's port, the example as an untouched
    script in its own interpreter with the real ``requests`` library."""
    import pytest

    pytest.importorskip("requests")
    with _port_claimed(8080):
        _run_example_against_serve_on_8080(tmp_path)


def _run_example_against_serve_on_8080(tmp_path: Any) -> None:
    import os
    import subprocess
    import time

    import pytest

    if not _port_free(8080):
        pytest.skip("port 8080 is in use on this machine; the rerouted variant above still ran")
    script = tmp_path / "client_example.py"
    script.write_text(example_code())
    from tests.workspace_trust import trust_folder

    trust_folder(tmp_path)  # the user serves a folder they trust
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOMA_SANDBOX_")}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "core.cli",
            "skills",
            "serve",
            "--port",
            "8080",
            "--workspace",
            str(tmp_path),
            "--log-level",
            "warning",
        ],
        env=env,
    )
    from core.netauth.local_token import read_local_token

    try:
        deadline = time.monotonic() + 60
        while True:
            token = read_local_token()  # the server makes it before it listens
            try:
                if token is not None and (
                    httpx.get(
                        "http://127.0.0.1:8080/healthz",
                        timeout=2,
                        headers={"Authorization": f"Bearer {token}"},
                    ).status_code
                    == 200
                ):
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, "noma skills serve exited early"
            assert time.monotonic() < deadline, "noma skills serve did not come up"
            time.sleep(0.1)
        netrc = tmp_path / "netrc"
        netrc.write_text(f"machine localhost login noma password {token}\n")
        netrc.chmod(0o600)
        no_token = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=300
        )
        result = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "NETRC": str(netrc)},
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert no_token.returncode != 0  # the unchanged example without the owner's token: 401
    assert result.returncode == 0, result.stderr
    assert "Success: Synced 1 leads (1 failed)." in result.stdout
    assert "Custom workflow result: {'synced': 4" in result.stdout


def test_a_port_claim_holds_off_another_process_until_released() -> None:
    """What keeps two suites on one host from both starting a server on 8080: while one
    process holds the claim, another cannot take it; once released, it can."""
    import subprocess
    import tempfile

    port = 1  # a claim only names its port: this one is never bound
    probe = (
        "import fcntl, sys\n"
        "handle = open(sys.argv[1], 'a')\n"
        "try:\n"
        "    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n"
        "    sys.exit(7)\n"
    )
    lock = str(Path(tempfile.gettempdir()) / f"noma-tests-port-{port}.lock")
    with _port_claimed(port):
        held = subprocess.run([sys.executable, "-c", probe, lock], timeout=60)
    free = subprocess.run([sys.executable, "-c", probe, lock], timeout=60)
    assert held.returncode == 7
    assert free.returncode == 0
