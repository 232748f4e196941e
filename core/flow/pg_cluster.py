"""A throw-away PostgreSQL cluster for tests and benchmarks: ``initdb`` in a temp dir, a
free loopback port, stopped and deleted at the end.

PostgreSQL refuses to run as root, so under root (CI, containers) the server runs as the
``postgres`` system user the Debian packages create, in a directory handed to that user.
Nothing is installed here: `find_binaries` reports where the server is missing and the
caller decides (tests skip with that message unless PostgreSQL is required).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

SUPERUSER = "noma"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL server binaries here, or the cluster would not start."""


def find_binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    candidates = []
    found = shutil.which("initdb")
    if found:
        candidates.append(Path(found).resolve().parent)
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for folder in candidates:
        if all((folder / b).is_file() for b in ("initdb", "pg_ctl", "postgres")):
            return folder
    raise ClusterUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) are not installed; "
        "on Debian: apt-get install postgresql"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EphemeralCluster:
    """``start()`` → ``url`` (a superuser on 127.0.0.1, trust auth) → ``stop()``."""

    def __init__(self, *, durable: bool = False) -> None:
        self.bin = find_binaries()
        self.durable = durable  # fsync on (benchmarks); tests trade it for speed
        self.dir = Path(tempfile.mkdtemp(prefix="noma-pg-"))
        self.port = 0
        self._user: str | None = None
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise ClusterUnavailable("running as root and no 'postgres' user") from exc
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._user = "postgres"

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self._user is not None:
            cmd = ["runuser", "-u", self._user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def start(self) -> str:
        data = self.dir / "data"
        done = self._run(
            "initdb", "-D", str(data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip
        if done.returncode != 0:
            raise ClusterUnavailable(f"initdb failed: {done.stderr.strip()[-400:]}")
        settings = "-c listen_addresses=127.0.0.1 -c max_connections=200"
        if not self.durable:
            settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        for _ in range(5):
            self.port = _free_port()
            started = self._run(
                "pg_ctl", "-D", str(data), "-l", str(self.dir / "server.log"), "-w", "-t", "60",
                "-o", f"-p {self.port} -k {self.dir} {settings}", "start",
            )  # fmt: skip
            if started.returncode == 0:
                return self.url
        log = (self.dir / "server.log").read_text(errors="replace")[-400:]
        raise ClusterUnavailable(f"the cluster would not start: {log}")

    def new_schema_url(self) -> str:
        """A fresh, empty schema and a URL whose connections use it (one per test)."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return f"{self.url}?options=-csearch_path%3D{name}"

    def stop(self) -> None:
        if (self.dir / "data" / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)
