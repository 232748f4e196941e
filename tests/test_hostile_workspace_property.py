"""A hostile workspace, drawn at random, can make the product write nothing outside it and
send nothing over the network while it is opened, checked, exported and verified.

Each example lays out a folder the way an attacker who owns a clone would: documents full
of terminal escapes, transcripts, pending records, temp files, exports and state dirs that
are symlinks to a victim folder outside, forged pending records (with the document's real
sha256, tiny or huge transcript sizes), and a config that names a hub and a run store on a
loopback listener and turns every gate on. Then the surfaces a user runs on a folder they
just cloned: ``noma check``, ``noma export`` (to stdout), ``noma transcript verify``,
``noma flow list``, and what the app does on open (settle the document, open the flow
context). Afterwards the victim folder and the user's own dirs must be byte-for-byte as
they were, and neither the listener nor the interpreter's socket audit events may have
seen a connection.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main as noma

CONNECTS: list[Any] = []
_WATCHING = threading.Event()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING.is_set() and event == "socket.connect":
        CONNECTS.append(args[1])


sys.addaudithook(_audit)


class Listener:
    """A loopback TCP port the hostile config points at; it counts who knocks."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``root`` (links not followed): its kind and content hash or target."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", oct(path.stat().st_mode))
            else:
                out[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return out


ESCAPES = ["\x1b]52;c;cHduZWQ=\x07", "\x1b]0;pwned\x07", "\x1b[2K", "\x9b31m", "\u202e"]

DOC = st.builds(
    lambda esc, title: (
        f"---\ntitle: {title}\n---\n\n# Intro {esc}\n\nText with {esc} in it.\n\n"
        f'::note{{id="n1" owner="{esc}"}}\nA note.\n::\n'
    ),
    st.sampled_from(ESCAPES),
    st.text(alphabet="abc xyz", min_size=1, max_size=12),
)


@st.composite
def hostile(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "doc": draw(DOC),
        "transcript": draw(st.sampled_from(["none", "junk", "link"])),
        "pending": draw(st.sampled_from(["none", "forged-post", "forged-other", "torn"])),
        "size": draw(st.sampled_from([0, 3, 10**12])),
        "temp": draw(st.sampled_from(["none", "link", "dir"])),
        "state": draw(st.sampled_from(["none", "link", "dir-with-links"])),
        "exports": draw(st.booleans()),
        "flows_link": draw(st.booleans()),
        "config": draw(st.booleans()),
    }


def lay_out(ws: Path, victim: Path, port: int, plan: dict[str, Any]) -> Path:
    doc = ws / "notes.noma"
    doc.write_text(plan["doc"], encoding="utf-8")
    transcript = ws / "notes.noma.patches"
    if plan["transcript"] == "junk":
        transcript.write_text('{"not": "a record"}\n', encoding="utf-8")
    elif plan["transcript"] == "link":
        transcript.symlink_to(victim / "bashrc")
    sha = hashlib.sha256(doc.read_bytes()).hexdigest()
    record = {"x": "$(id>~/pwned)", "op_id": "forged"}
    pending = ws / ".notes.noma.pending"
    if plan["pending"] in ("forged-post", "forged-other"):
        state = {
            "pending_version": 1,
            "pre_sha256": None,
            "post_sha256": sha if plan["pending"] == "forged-post" else "0" * 64,
            "transcript_size": plan["size"],
            "temp": "../victim/bashrc",
            "records": [record],
        }
        pending.write_text(json.dumps(state), encoding="utf-8")
    elif plan["pending"] == "torn":
        pending.write_text('{"pending_version": 1, "post_', encoding="utf-8")
    if plan["temp"] == "link":
        (ws / ".notes.noma.abc123.tmp").symlink_to(victim / "profile")
    elif plan["temp"] == "dir":
        (ws / ".notes.noma.abc124.tmp").mkdir()
    if plan["state"] == "link":
        (ws / ".noma-workbench").symlink_to(victim / "state", target_is_directory=True)
    elif plan["state"] == "dir-with-links":
        state_dir = ws / ".noma-workbench"
        state_dir.mkdir()
        for name in ("actor.key", "runs.sqlite3", "hub.sqlite3", "secrets.toml"):
            (state_dir / name).symlink_to(victim / name)
    if plan["exports"]:
        for name in ("notes.md", "notes.html", "notes.llm.md"):
            (ws / name).symlink_to(victim / "bashrc")
    if plan["flows_link"]:
        (ws / "flows").symlink_to(victim / "state", target_is_directory=True)
    if plan["config"]:
        (ws / "noma-workbench.toml").write_text(
            f'[hub]\nurl = "http://127.0.0.1:{port}"\n\n'
            f'[store]\nurl = "postgresql://u:p@127.0.0.1:{port}/db"\n\n'
            "[gates]\nrun_writes_enabled = true\nautomatable_execution_enabled = true\n\n"
            '[secrets.from_env]\nX = "HOME"\n',
            encoding="utf-8",
        )
    return doc


def make_victim(victim: Path) -> None:
    victim.mkdir()
    (victim / "bashrc").write_text("# the user's shell startup\n", encoding="utf-8")
    (victim / "profile").write_text("# profile\n", encoding="utf-8")
    (victim / "state").mkdir()
    (victim / "state" / "keep").write_text("precious\n", encoding="utf-8")
    for name in ("actor.key", "runs.sqlite3", "hub.sqlite3", "secrets.toml"):
        (victim / name).write_text(f"victim {name}\n", encoding="utf-8")


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield


def run_surfaces(ws: Path, doc: Path) -> None:
    """What a user runs on a folder they just cloned, and what the app does on opening it."""
    from core.noma.commit import touch
    from core.workspace import Workspace
    from noma_tui.flow_hub import open_flow_backend

    commands = [
        ["check", str(doc)],
        ["check", "--json", str(doc)],
        ["export", "--to", "markdown", str(doc)],
        ["export", "--to", "html", str(doc)],
        ["transcript", "verify", str(doc) + ".patches"],
        ["flow", "list", "--root", str(ws)],
    ]
    try:
        for argv in commands:
            with quiet(), contextlib.suppress(SystemExit):
                noma(argv)
    finally:
        gc.enable()  # the CLI turns it off for one-shot commands
    with quiet(), contextlib.suppress(Exception):
        touch(doc)
    with quiet(), contextlib.suppress(Exception):
        open_flow_backend(Workspace.open(ws)).close()


@pytest.mark.long(10)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=hostile())
def test_a_hostile_workspace_reaches_nothing_outside(
    plan: dict[str, Any], _user_dirs: Path, tmp_path_factory: Any
) -> None:
    base = tmp_path_factory.mktemp("hostile")
    ws, victim = base / "ws", base / "victim"
    ws.mkdir()
    make_victim(victim)
    listener = Listener()
    try:
        doc = lay_out(ws, victim, listener.port, plan)
        before = (snapshot(victim), snapshot(_user_dirs))
        CONNECTS.clear()
        _WATCHING.set()
        try:
            run_surfaces(ws, doc)
        finally:
            _WATCHING.clear()
        assert snapshot(victim) == before[0], "a file outside the workspace changed"
        assert snapshot(_user_dirs) == before[1], "the user's own dirs changed"
        assert CONNECTS == [], f"connections attempted: {CONNECTS}"
    finally:
        listener.close()
    assert listener.accepted == 0, "the hostile config's endpoint was reached"
