"""The ``noma`` executable ends document commands without freeing the heap (`core.cli.run`).

Each case runs a command twice in a fresh interpreter: through `run` (the executable's
path, which ends with ``os._exit``) and through `main` followed by Python's ordinary
shutdown. Exit status, stdout and stderr must be the same bytes, also when stdout is a pipe
the reader closes early or a full device.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.cli import FAST_EXIT, LONG_RUNNING

# A sentinel whose finaliser speaks at heap teardown, and an atexit callback: the fast
# path must skip the first and still run the second.
PRELUDE = (
    "import atexit, sys\n"
    "class Sentinel:\n"
    "    def __del__(self):\n"
    "        sys.stderr.write('heap torn down\\n')\n"
    "keep = Sentinel()\n"
    "atexit.register(lambda: sys.stderr.write('atexit ran\\n'))\n"
    "from core import cli\n"
)
FAST = PRELUDE + "cli.run()\n"
Result = tuple[int, bytes, bytes]
# Python's default buffering, as a user has it (this environment may turn it off).
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
ORDINARY = PRELUDE + "sys.exit(cli.main(sys.argv[1:]))\n"

CLEAN = '# Title\n\nA paragraph that says [[title]].\n\n::claim{id="c1"}\nIt holds.\n::\n'


def _broken_doc(n: int) -> str:
    """``n`` broken references: ``check`` exits 1 and prints about 150 bytes for each."""
    return "# Doc\n\n" + "".join(f"See [[missing-{i}]].\n\n" for i in range(n))


def _run(
    script: str,
    args: list[str],
    cwd: Path,
    stdout: Any = subprocess.PIPE,
) -> Result:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=300,
        env=BUFFERED,
    )
    return done.returncode, done.stdout or b"", done.stderr


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    (tmp_path / "clean.noma").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "broken.noma").write_text(_broken_doc(40), encoding="utf-8")
    (tmp_path / "big-broken.noma").write_text(_broken_doc(20_000), encoding="utf-8")
    return tmp_path


CASES = [
    ["check", "clean.noma"],
    ["check", "broken.noma"],
    ["check", "broken.noma", "--json"],
    ["check", "missing.noma"],
    ["parse", "clean.noma"],
    ["ids", "clean.noma"],
    ["render", "clean.noma", "--to", "html"],
    ["export", "broken.noma", "--to", "markdown"],
    ["render", "clean.noma"],
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a) for a in CASES])
def test_output_and_status_match_the_ordinary_shutdown(docs: Path, args: list[str]) -> None:
    fast = _run(FAST, args, docs)
    ordinary = _run(ORDINARY, args, docs)
    assert fast[0] == ordinary[0]
    assert fast[1] == ordinary[1]
    assert fast[2].replace(b"atexit ran\n", b"") == ordinary[2].replace(
        b"atexit ran\nheap torn down\n", b""
    )
    # The fast path skipped the teardown and still ran the atexit callbacks.
    assert fast[2].endswith(b"atexit ran\n") and b"heap torn down" not in fast[2]
    assert ordinary[2].endswith(b"heap torn down\n")


def test_exit_codes_are_the_verdicts(docs: Path) -> None:
    assert _run(FAST, ["check", "clean.noma"], docs)[0] == 0
    assert _run(FAST, ["check", "broken.noma"], docs)[0] == 1
    assert _run(FAST, ["check", "missing.noma"], docs)[0] == 2


def test_other_commands_shut_down_the_ordinary_way(docs: Path) -> None:
    """A command that may hold a store open (trust, flow, hub, skills) is not cut short."""
    assert not FAST_EXIT & LONG_RUNNING
    code, _out, err = _run(FAST, ["untrust", str(docs)], docs)
    assert code in (0, 1, 2)
    assert err.endswith(b"heap torn down\n")


def _closed_early(script: str, args: list[str], cwd: Path) -> Result:
    """Run with stdout a pipe whose reader takes one line, then closes it (``| head -1``)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=BUFFERED,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    return proc.wait(timeout=300), first, err


@pytest.mark.parametrize("args", [["check", "big-broken.noma"], ["parse", "big-broken.noma"]])
def test_a_reader_that_closes_early(docs: Path, args: list[str]) -> None:
    fast = _closed_early(FAST, args, docs)
    ordinary = _closed_early(ORDINARY, args, docs)
    assert fast[1] == ordinary[1] and fast[1]  # the first line arrived
    assert fast[0] == ordinary[0]
    if args[0] == "check":
        assert fast[0] == 1  # the failing verdict survives the closed pipe
    assert b"Traceback" not in fast[2]


@pytest.mark.parametrize("args", [["check", "clean.noma"], ["check", "big-broken.noma"]])
def test_a_full_stdout(docs: Path, args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        fast = _run(FAST, args, docs, stdout=full)
        ordinary = _run(ORDINARY, args, docs, stdout=full)
    assert fast[0] == ordinary[0] != 0  # the lost output is never a success
    assert b"No space left on device" in fast[2]


@pytest.mark.parametrize(("args", "code"), [(["check"], 2), (["--version"], 0), ([], 2)])
def test_usage_and_version_are_unchanged(docs: Path, args: list[str], code: int) -> None:
    """argparse's own exits (usage errors, ``--version``) and no command at all."""
    fast = _run(FAST, args, docs)
    ordinary = _run(ORDINARY, args, docs)
    assert (fast[0], fast[1], fast[2]) == (ordinary[0], ordinary[1], ordinary[2])
    assert fast[0] == code


def test_a_failed_final_flush_takes_the_ordinary_shutdown(docs: Path) -> None:
    """Text still buffered for a pipe nobody reads any more: Python's own message and
    status 120, as without the fast exit."""
    script = (
        "import os, sys\n"
        "from core.cli import exit_now\n"
        "r, w = os.pipe()\n"
        "os.dup2(w, 1)\n"
        "os.close(r)\n"
        "sys.stdout.write('buffered, never delivered')\n"
    )
    fast = _run(script + "exit_now(0)\n", [], docs)
    ordinary = _run(script + "sys.exit(0)\n", [], docs)
    assert fast[0] == ordinary[0] == 120
    assert b"BrokenPipeError" in fast[2]
    assert fast[2] == ordinary[2]


def test_a_live_thread_takes_the_ordinary_shutdown(docs: Path) -> None:
    """Python waits for a non-daemon thread at exit; so does `exit_now` (by not cutting)."""
    script = (
        "import sys, threading, time\n"
        "from core.cli import exit_now\n"
        "go = threading.Event()\n"
        "def work():\n"
        "    go.wait()\n"
        "    sys.stdout.write('thread done\\n')\n"
        "threading.Thread(target=work).start()\n"
        "go.set()\n"
        "exit_now(3)\n"
    )
    code, out, _err = _run(script, [], docs)
    assert code == 3 and out == b"thread done\n"
