"""Acceptance abuse tests over HTTP: each run fails cleanly and the server keeps serving.

Every test ends with ``server.assert_serving()`` (a fresh run completes) and the session
fixture checks at shutdown that no sandbox process, mount or cgroup survived.
"""

from __future__ import annotations

import os
from pathlib import Path

from skills_testlib import SERVER_SECRET, Server, leftover_processes


def run(server: Server, code: str, **params: object) -> dict:
    return server.result("run_code", {"language": "python", "code": code, **params})


def failed(result: dict, *types: str) -> None:
    assert result["status"] == "failed", result
    assert result["error"]["type"] in types, result["error"]
    assert result["run_id"].startswith("run_") and result["summary"]


def test_fork_bomb(server: Server) -> None:
    failed(
        run(
            server,
            "import os\ndef main(args):\n    while True:\n        os.fork()\n",
            limits={"timeout_ms": 5000},
        ),
        "BlockingIOError",
        "TimeoutError",
    )
    server.assert_serving()


def test_memory_bomb(server: Server) -> None:
    failed(run(server, "def main(args):\n    return len(b'x' * (4 << 30))\n"), "MemoryError")
    server.assert_serving()


def test_infinite_loop(server: Server) -> None:
    failed(
        run(
            server, "def main(args):\n    while True:\n        pass\n", limits={"timeout_ms": 1000}
        ),
        "TimeoutError",
    )
    server.assert_serving()


def test_one_gigabyte_file_write(server: Server) -> None:
    code = (
        "def main(args):\n    with open('/workspace/big', 'wb') as fh:\n"
        "        for _ in range(1024):\n            fh.write(b'0' * (1 << 20))\n"
    )
    failed(run(server, code), "OSError")
    server.assert_serving()


def test_socket_connect_to_loopback(server: Server) -> None:
    code = (
        "import socket\ndef main(args):\n"
        "    socket.create_connection(('127.0.0.1', args['port']), timeout=3)\n"
        "    return 'connected'\n"
    )
    failed(run(server, code, args={"port": server.port}), "OSError", "ConnectionRefusedError")
    server.assert_serving()


def test_reading_a_root_only_file(server: Server) -> None:
    secret = server.workspace / "skills" / "acme.box" / "resources" / "root-only.txt"
    assert os.stat(secret).st_mode & 0o777 == 0o600
    result = server.result(
        "execute_skill",
        {"name": "acme.box", "args": {"path": "/skills/acme.box/resources/root-only.txt"}},
    )
    failed(result, "PermissionError")
    assert "TOP-SECRET" not in str(result)
    server.assert_serving()


def test_reading_the_server_environment_secrets(server: Server) -> None:
    code = (
        "import os\n"
        "def main(args):\n"
        "    assert 'NOMA_TEST_SERVER_SECRET' not in os.environ, 'leaked into env'\n"
        "    return open(f\"/proc/{args['pid']}/environ\").read()\n"
    )
    result = run(server, code, args={"pid": server.proc.pid})
    failed(result, "FileNotFoundError", "PermissionError")
    assert SERVER_SECRET not in str(result)
    scan = run(
        server,
        "import os\ndef main(args):\n    found = []\n"
        "    for p in os.listdir('/proc'):\n        try:\n"
        "            with open(f'/proc/{p}/environ') as fh:\n"
        "                found.append(fh.read())\n"
        "        except OSError:\n            pass\n"
        "    return 'S' in ''.join(found)\n",
    )
    assert SERVER_SECRET not in str(scan)
    server.assert_serving()


def test_symlink_escaping_workspace(server: Server) -> None:
    code = (
        "import os\ndef main(args):\n    os.symlink('/etc/shadow', '/workspace/s')\n"
        "    os.symlink('/proc/1/root/etc/shadow', '/workspace/t')\n"
        "    return open('/workspace/s').read() + open('/workspace/t').read()\n"
    )
    failed(run(server, code), "FileNotFoundError", "PermissionError")
    server.assert_serving()


def test_printing_100_mb_to_stdout(server: Server) -> None:
    before = server.rss_kib()
    code = (
        "import sys\ndef main(args):\n    for _ in range(100):\n"
        "        sys.stdout.write('x' * (1 << 20))\n"
    )
    result = run(server, code)
    failed(result, "LogLimitExceeded")
    assert len(result["logs_preview"].encode()) <= 2048
    assert server.rss_kib() - before < 64 * 1024  # the flood never sat in server memory
    server.assert_serving()


def test_skill_path_traversal(server: Server) -> None:
    reply = server.rpc(
        "read_skill_file", {"name": "salesforce.leads.sync", "path": "../../etc/passwd"}
    )
    assert reply["error"]["code"] == -32602
    assert "root:" not in str(reply)
    server.assert_serving()


def test_output_over_4kb_fails_with_blob_advice(server: Server) -> None:
    result = run(server, "def main(args):\n    return {'rows': ['x' * 100] * 50}\n")
    failed(result, "OutputTooLarge")
    assert "runtime.blobs.write_text" in result["error"]["message"]
    server.assert_serving()


def test_nothing_of_the_runs_is_left_running(server: Server) -> None:
    server.assert_serving()
    health = server.health()["sandbox"]
    assert health["tier"] in ("bubblewrap", "namespaces")
    for _ in range(500):  # teardown finishes just after the reply; wait for it by count
        health = server.health()["sandbox"]
        if health["active"] == 0:
            break
    assert health["active"] == 0
    uids = set(health["uids"])
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            uid = int(next(ln for ln in status.splitlines() if ln.startswith("Uid:")).split()[1])
            assert uid not in uids, status[:200]
    assert leftover_processes() == []
