"""Issue 29: every line sent to ``noma mcp`` gets an answer. A request holding an escaped
lone surrogate, bytes that are not UTF-8, nesting past any real message, or text that is
not JSON used to vanish (no reply, no stderr): the agent waited forever."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import pytest

from core.mcp.stdio_guard import BadLine, check_line

REPO = Path(__file__).resolve().parents[2]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


class Server:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "mcp", "--root", str(root)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: Queue[bytes] = Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30.0) -> dict[str, Any]:
        try:
            return dict(json.loads(self.lines.get(timeout=timeout)))
        except Empty:
            raise AssertionError("no reply from the MCP server") from None

    def close(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")


def call(ident: int, text: str) -> bytes:
    """A tools/call whose argument is ``text`` spliced in raw (escapes kept as written)."""
    head = '{"jsonrpc":"2.0","id":' + str(ident)
    return (
        head
        + ',"method":"tools/call","params":{"name":"list_ids","arguments":{"file":"'
        + text
        + '"}}}'
    ).encode()


HOSTILE = [
    pytest.param(call(7, "a\\ud800b"), 7, -32600, id="lone-high-surrogate"),
    pytest.param(call(7, "a\\udfffb"), 7, -32600, id="lone-low-surrogate"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a\\ud800":1}}',
        7,
        -32600,
        id="surrogate-in-a-key",
    ),
    pytest.param(call(7, "aXXb").replace(b"XX", b"\xff\xfe"), None, -32700, id="not-utf8"),
    pytest.param(b'{"jsonrpc":"2.0","id":7,"params":' + b"[" * 5000, None, -32700, id="deep-open"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":' + b"[" * 100 + b"]" * 100 + b"}}",
        7,
        -32600,
        id="deep-closed",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":7,"method":"ping","params":' + b"[" * 9000 + b"]" * 9000 + b"}",
        None,
        -32700,
        id="deeper-than-the-parser",
    ),
    pytest.param(b"{not json", None, -32700, id="not-json"),
    pytest.param(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', None, -32600, id="bad-id"),
]


class Served:
    """One initialized server per test worker for the malformed-line tests (a server start
    is ~1.4 s of CPU, mostly the SDK's imports). Each test sends its line and then a ping,
    so the server also shows it still serves after every bad line sent before; a test that
    fails closes it, and the next one starts a fresh server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.server: Server | None = None

    def get(self) -> Server:
        if self.server is None or self.server.proc.poll() is not None:
            self.server = server = Server(self.root)
            try:
                server.send(json.dumps(INIT).encode())
                assert server.reply()["id"] == 0
                server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            except BaseException:
                self.drop()  # a server that never answered is not left running
                raise
        return self.server

    def drop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.proc.kill()
            server.proc.wait(30)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("served")
    (root / "a.noma").write_text("# A\n", encoding="utf-8")
    serving = Served(root)
    yield serving
    serving.drop()


@pytest.mark.parametrize(("line", "ident", "code"), HOSTILE)
def test_a_malformed_request_gets_its_coded_error(served: Served, line, ident, code) -> None:
    server = served.get()
    try:
        server.send(line)
        answer = server.reply()
        assert answer["id"] == ident and answer["error"]["code"] == code, answer
        server.send(b'{"jsonrpc":"2.0","id":8,"method":"ping"}')  # and it still serves
        assert server.reply() == {"jsonrpc": "2.0", "id": 8, "result": {}}
    except BaseException:
        served.drop()
        raise


def test_a_malformed_notification_is_reported_on_stderr(tmp_path: Path) -> None:
    server = Server(tmp_path)
    server.send(json.dumps(INIT).encode())
    assert server.reply()["id"] == 0
    server.send(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    server.send(b'{"jsonrpc":"2.0","id":9,"method":"ping"}')
    assert server.reply()["id"] == 9
    assert "lone surrogate" in server.close()


def test_clean_lines_pass_unchanged() -> None:
    line = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"é \\ud83d\\ude00"}}'
    assert check_line(line.encode()) == line
    with pytest.raises(BadLine):
        check_line(b'{"t":"\\ud83d"}')


async def test_an_oversized_line_is_refused_without_reading_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from core.mcp import stdio_guard

    monkeypatch.setattr(stdio_guard, "MAX_LINE_BYTES", 1000)
    huge = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"' + b"a" * 5000 + b'"}}\n'
    ping = b'{"jsonrpc":"2.0","id":4,"method":"ping"}\n'
    source = io.BufferedReader(io.BytesIO(huge + ping))  # type: ignore[arg-type]
    stdin = stdio_guard.GuardedStdin(source)
    replies: list[tuple[Any, int, str]] = []

    async def reply(request_id: Any, code: int, message: str) -> None:
        replies.append((request_id, code, message))

    stdin.answer_with(reply)
    passed = [line async for line in stdin]
    assert replies == [(None, -32700, "Parse error: the message is too large")]
    assert passed == [ping.decode().rstrip("\n")]
