"""A real ``skills serve`` on a free loopback port, with a workspace of test skills.

The server runs as a subprocess exactly as a user would start it (``python -m core.cli
skills serve``, the ``noma skills serve`` command), so tests see its true memory, its real
sandbox and its shutdown. Its environment carries a server secret that must never reach a run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest

from tests.server_testlib import launch

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("NOMA_SHARED_DIR", REPO.parent / "shared"))
SPEC = SHARED / "spec" / "skills-protocol-v0.1.txt"
# One uid range per test session: the leftover check sees this run's sandboxes only.
UID_BASE = 2_200_000_000 + (os.getpid() % 4096) * 256
SERVER_SECRET = "server-secret-5e1f"
DEMO_TOKEN = "demo-token-77"
IS_ROOT = os.geteuid() == 0

ECHO_TOML = """\
name = "acme.echo"
version = "{version}"
description = "Return the args it was given."
kind = "action"
namespace = "acme"
tags = ["test"]

[runtime]
language = "python"
entrypoint = "code/main.py"
export = "main"
"""

SECRETS_TOML = """\
name = "acme.secrets"
version = "1.0.0"
description = "Report which secrets it can see."
kind = "action"

[runtime]
language = "python"
entrypoint = "code/main.py"
export = "main"

[permissions]
secrets = ["DEMO_TOKEN"]
"""


OTHER_TOKEN = "other-token-3c9a"
# The operator's grants: the server's environment is a secret source only where named here.
WORKBENCH_TOML = """\
[secrets.from_env]
DEMO_TOKEN = "DEMO_TOKEN"
NOMA_TEST_SERVER_SECRET = "NOMA_TEST_SERVER_SECRET"
OTHER_TOKEN = "OTHER_TOKEN"

[secrets.grants]
# granted but only DEMO_TOKEN is declared by the skill: the server secret never reaches it
"acme.secrets" = ["DEMO_TOKEN", "NOMA_TEST_SERVER_SECRET"]
# an unpinned grant to an agent-created name never counts
"user.evil.grab" = ["OTHER_TOKEN", "DEMO_TOKEN"]
# a version-pinned grant to an agent-created skill counts for that version only
"user.ops.tool@0.1.0" = ["OTHER_TOKEN"]
"""


def spec_text() -> str:
    if not SPEC.is_file():
        if os.environ.get("NOMA_REQUIRE_SHARED") == "1":
            pytest.fail(f"{SPEC} is missing but NOMA_REQUIRE_SHARED is set")
        pytest.skip(f"the shared spec is not beside the repo ({SPEC})")
    return SPEC.read_text(encoding="utf-8")


def make_skill(
    root: Path, dirname: str, toml: str, code: str, extra: dict[str, str] | None = None
) -> Path:
    d = root / dirname
    (d / "code").mkdir(parents=True)
    (d / "skill.toml").write_text(toml)
    front = f"---\nname: {dirname}\nshort_description: test skill\n---\n\nBody.\n"
    (d / "SKILL.md").write_text(front)
    (d / "code" / "main.py").write_text(code)
    for rel, text in (extra or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d


def build_workspace(ws: Path) -> None:
    skills = ws / "skills"
    make_skill(
        skills,
        "acme.echo",
        ECHO_TOML.format(version="0.2.0"),
        "def main(args):\n    return {'echo': args}\n",
    )
    make_skill(
        skills,
        "acme.echo-old",
        ECHO_TOML.format(version="0.1.0"),
        "def main(args):\n    return {'old': True}\n",
    )
    make_skill(
        skills,
        "acme.secrets",
        SECRETS_TOML,
        "import os\ndef main(args):\n"
        "    names = ('DEMO_TOKEN', 'NOMA_TEST_SERVER_SECRET')\n"
        "    return {k: os.environ.get(k) for k in names}\n",
    )
    box_toml = ECHO_TOML.replace("acme.echo", "acme.box").format(version="1.0.0")
    box = make_skill(
        skills,
        "acme.box",
        box_toml,
        "def main(args):\n    return open(args['path']).read()\n",
        {"resources/notes.md": "# notes\n", "resources/root-only.txt": "TOP-SECRET\n"},
    )
    (box / "resources" / "root-only.txt").chmod(0o600)
    (ws / "noma-workbench.toml").write_text(WORKBENCH_TOML)
    os.symlink("/etc/passwd", box / "resources" / "passwd-link")
    os.symlink("/etc", box / "resources" / "etc-link")
    for path in [ws, *ws.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)


class Server:
    """A running server and a client carrying the owner's token (``user_env`` holds the
    server's own XDG runtime and state dirs: where that token and the hub tokens live)."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        port: int,
        workspace: Path,
        user_env: dict[str, str] | None = None,
    ) -> None:
        self.proc = proc
        self.port = port
        self.workspace = workspace
        self.user_env = user_env or {}
        self.base = f"http://127.0.0.1:{port}"
        self.client = httpx.Client(timeout=120)
        self._ids = 0

    def owner_token(self) -> str | None:
        """The local token the server made, read where the owner's clients find it."""
        from core.netauth.local_token import read_local_token

        with mock.patch.dict(os.environ, self.user_env):
            return read_local_token()

    def as_caller(self, name: str, *, human: bool = False) -> Server:
        """The same server seen through a new hub token named ``name`` (an agent unless
        ``human``): it creates skills under ``user.<name>`` only."""
        from core.netauth.tokens import TokenStore
        from core.workspace import Workspace

        with mock.patch.dict(os.environ, self.user_env):
            store = TokenStore.for_workspace(Workspace.open(self.workspace).root)
        token, _ = store.create(name, human=human)
        other = Server(self.proc, self.port, self.workspace, self.user_env)
        other.client.headers["Authorization"] = f"Bearer {token}"
        return other

    def rpc(self, method: str, params: Any = None, **extra: Any) -> dict[str, Any]:
        self._ids += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            body["params"] = params
        body.update(extra)
        return self.client.post(f"{self.base}/rpc", json=body).json()

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.rpc(method, params)
        assert "error" not in reply, reply
        return reply["result"]

    def post_raw(self, data: bytes) -> httpx.Response:
        return self.client.post(
            f"{self.base}/rpc", content=data, headers={"content-type": "application/json"}
        )

    def health(self) -> dict[str, Any]:
        r = self.client.get(f"{self.base}/healthz")
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def assert_serving(self) -> None:
        """The server still answers and still runs code after whatever just happened."""
        run = self.result("execute_skill", {"name": "acme.echo", "args": {"ping": 1}})
        assert run["status"] == "completed", run
        assert run["output"] == {"echo": {"ping": 1}}


def trust_in(workspace: Path, config_home: Path) -> None:
    """Trust ``workspace`` in the trust store under ``config_home`` (an XDG config dir)."""
    from core.trust import TrustStore
    from core.workspace import Workspace

    ws = Workspace.open(workspace)
    TrustStore(config_home / "noma-workbench").trust(ws.root, ws.config)


def start_server(
    workspace: Path,
    extra_env: dict[str, str] | None = None,
    config_home: Path | None = None,
    user_home: Path | None = None,
) -> Server:
    """Serve ``workspace``, trusted as the user trusts it: in ``config_home`` (default the
    test's own ``XDG_CONFIG_HOME``), which the server is given. ``user_home`` (default the
    test's own dirs) holds the server's runtime and state dirs: its token is found there."""
    env = dict(os.environ)
    home = config_home or Path(os.environ["XDG_CONFIG_HOME"])
    trust_in(workspace, home)
    env["XDG_CONFIG_HOME"] = str(home)
    if user_home is not None:
        (user_home / "runtime").mkdir(mode=0o700, exist_ok=True)
        (user_home / "state").mkdir(exist_ok=True)
        env["XDG_RUNTIME_DIR"] = str(user_home / "runtime")
        env["XDG_STATE_HOME"] = str(user_home / "state")
    user_env = {k: env[k] for k in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME") if k in env}
    env.update(
        {
            "NOMA_TEST_SERVER_SECRET": SERVER_SECRET,
            "DEMO_TOKEN": DEMO_TOKEN,
            "OTHER_TOKEN": OTHER_TOKEN,
            "NOMA_SANDBOX_UID_BASE": str(UID_BASE),
            "NOMA_SANDBOX_LOCK_DIR": "/run/noma-sandbox-tests",
        }
    )
    env.update(extra_env or {})
    served = launch(
        [sys.executable, "-m", "core.cli", "skills", "serve", "--workspace", str(workspace),
         "--log-level", "warning"],
        cwd=REPO,
        env=env,
        stdout=None,
    )  # fmt: skip
    proc, port = served.proc, served.port
    server = Server(proc, port, workspace, user_env)
    # It listens (`launch` read the line), and it made the owner's token before that.
    token = server.owner_token()
    assert token is not None, served.stderr_text()
    server.client.headers["Authorization"] = f"Bearer {token}"
    server.health()
    return server


def stop_server(server: Server) -> None:
    server.client.close()
    server.proc.terminate()
    # uvicorn re-raises SIGTERM after its graceful shutdown, so -15 is a clean exit too.
    assert server.proc.wait(timeout=60) in (0, -15), "server did not shut down cleanly"
    assert leftover_processes() == [], "sandbox processes survived the server"
    tag = f"noma-sandbox-{server.proc.pid}-"
    for controller in ("memory", "pids"):
        root = Path("/sys/fs/cgroup") / controller
        if root.is_dir():
            assert not [p for p in root.rglob(f"{tag}*")], f"{controller} cgroups left behind"


def leftover_processes() -> list[str]:
    """Processes of the test uid range, or launchers, still around (zombies included)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        uid = int(next(ln for ln in status.splitlines() if ln.startswith("Uid:")).split()[1])
        state = next(ln for ln in status.splitlines() if ln.startswith("State:"))
        if UID_BASE <= uid < UID_BASE + 256 or (
            b"guest/launcher.py" in cmdline
            and str(UID_BASE).encode() not in cmdline
            and "Z" not in state
            and b"--parent" in cmdline
            and int(cmdline.split(b"--parent ")[1].split()[0]) not in _live_pids()
        ):
            found.append(f"{entry} {state} {cmdline[:80]!r}")
    return found


def _live_pids() -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not IS_ROOT:
        pytest.skip("needs root: the sandbox drops runs to per-slot uids (CI runs as root)")
    ws = tmp_path_factory.mktemp("skills-ws")
    build_workspace(ws)
    # Session-scoped: set up before any test's own XDG dirs, so it brings its own.
    srv = start_server(
        ws,
        config_home=tmp_path_factory.mktemp("skills-user-config"),
        user_home=tmp_path_factory.mktemp("skills-user"),
    )
    try:
        yield srv
    finally:
        stop_server(srv)
