"""Sandboxes started ahead of the call (issue 24: ``execute_skill`` within 1.5x of a bare
spawn on the bubblewrap tier), and the skills that reach them at call time.

On the bubblewrap tier each idle slot holds a finished sandbox whose launcher waits for
its one request; the run's skills arrive then, as directory fds the server opened without
following any symlink. The attacks: a skill folder swapped for a symlink after the
registry resolved it, state of one run reaching the next pre-started sandbox, a request
whose skill fds do not match it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from sandbox_testlib import BWRAP, IS_ROOT, config_for

from sandbox import Job, Sandbox, SkillMount
from sandbox.procs import is_alive
from sandbox.runner import GUEST_DIR

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="needs root: sandbox tiers drop to slot uids")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    out: list[int] = []
    todo = list(tree.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += tree.get(p, [])
    return out


def _waiting_sandboxes() -> list[tuple[int, list[int]]]:
    """Children of this process that are bubblewrap, each with the pids of its tree that
    live in a network namespace other than ours (the sandbox's processes)."""
    assert BWRAP is not None
    ours = os.readlink("/proc/self/ns/net")
    tree = _children()
    found = []
    for pid in tree.get(os.getpid(), []):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if exe != os.path.realpath(BWRAP):
            continue
        inside = []
        for p in _descendants(pid, tree):
            try:
                if os.readlink(f"/proc/{p}/ns/net") != ours:
                    inside.append(p)
            except OSError:
                continue
        found.append((pid, inside))
    return found


@pytest.mark.skipif(not BWRAP, reason="bubblewrap (bwrap) is not installed on this host")
async def test_bubblewrap_slots_hold_a_finished_sandbox_before_the_call() -> None:
    """Each idle slot's launcher is already bubblewrap with its launcher inside the
    sandbox's namespaces, so a call pays for neither (was: a Python launcher that only
    execs bubblewrap once the call's request arrives)."""
    # Processes this worker already had (a session's skills server, a database cluster
    # under pytest-xdist): the sandbox must leave nothing beyond them.
    before = set(_descendants(os.getpid(), _children()))
    box = Sandbox(config_for("bubblewrap", timeout_s=10.0))
    await box.start()
    try:
        assert box.tier == "bubblewrap", box.unavailable_reason
        await box.idle()
        deadline = time.monotonic() + 20
        waiting = _waiting_sandboxes()
        while time.monotonic() < deadline and not (
            len(waiting) == box.config.slots and all(len(inside) >= 2 for _, inside in waiting)
        ):
            await box.idle()
            waiting = _waiting_sandboxes()
        assert len(waiting) == box.config.slots, waiting
        for _, inside in waiting:  # bwrap's init (pid 1) and the launcher waiting in it
            assert len(inside) >= 2, waiting
        out = await box.run(Job(mode="code", code="def main(args):\n    return 7\n"), None)
        assert out.status == "completed" and out.output == 7, out.error
    finally:
        await box.close()
    assert _waiting_sandboxes() == []
    assert set(_descendants(os.getpid(), _children())) - before == set()


def _secret_dir(tmp_path: Path) -> Path:
    real = tmp_path / "elsewhere"
    (real / "code").mkdir(parents=True)
    for p in (tmp_path, real, real / "code"):
        p.chmod(0o755)
    (real / "code" / "main.py").write_text("X = 1\n")
    (real / "secret.txt").write_text("NOT-A-SKILL")
    (real / "secret.txt").chmod(0o644)
    return real


READ_SECRET = (
    "import os\n"
    "def main(args):\n"
    "    import skills.acme.swap as s\n"
    "    return open(os.path.dirname(os.path.dirname(s.__file__)) + '/secret.txt').read()\n"
)


async def test_a_skill_folder_swapped_for_a_symlink_is_refused(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The registry resolved the folder; the workspace then swapped it for a symlink to
    a folder no skill lives in. The run is refused with a coded error (was: the link was
    followed and the other folder copied into the run)."""
    real = _secret_dir(tmp_path)
    link = tmp_path / "acme.swap"
    link.symlink_to(real)
    mount = SkillMount("acme.swap", link, "code/main.py")
    out = await sandbox.run(Job(mode="code", code=READ_SECRET, mounts=(mount,)), None)
    assert out.status == "failed", out
    assert out.error is not None and out.error.type == "UnsafeSkillPath", out.error
    assert "symlink" in out.error.message
    assert out.output is None and "NOT-A-SKILL" not in out.logs_preview


async def test_a_directory_above_the_skill_swapped_for_a_symlink_is_refused(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    real = _secret_dir(tmp_path / "a")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    mount = SkillMount("acme.swap", tmp_path / "b" / real.name, "code/main.py")
    out = await sandbox.run(Job(mode="code", code=READ_SECRET, mounts=(mount,)), None)
    assert out.status == "failed", out
    assert out.error is not None and out.error.type == "UnsafeSkillPath", out.error
    # The same folder reached without the link runs.
    mount = SkillMount("acme.swap", real, "code/main.py")
    out = await sandbox.run(Job(mode="code", code=READ_SECRET, mounts=(mount,)), None)
    assert out.status == "completed" and out.output == "NOT-A-SKILL", out.error


async def test_a_refused_run_leaves_its_slots_waiting_launcher_alive(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """A run refused before it started (here: a skill path through a symlink) has no
    process of its own; its teardown must not kill what waits in its slot. It did: the
    slot's cgroup was emptied, so the launcher waiting for the slot's next run died, and
    that run ended with "exit status -9" whenever the event loop had not yet noticed the
    death (a second load-proof run failed so)."""
    await sandbox.idle()  # the start-up probe's teardown is done; both slots wait
    waiting = await _waiting_launchers(sandbox)
    assert len(waiting) == sandbox.config.slots and all(map(is_alive, waiting.values()))
    real = _secret_dir(tmp_path / "a")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    refused = SkillMount("acme.swap", tmp_path / "b" / real.name, "code/main.py")
    out = await sandbox.run(Job(mode="code", code=READ_SECRET, mounts=(refused,)), None)
    assert out.error is not None and out.error.type == "UnsafeSkillPath", out.error
    await sandbox.idle()
    assert await _waiting_launchers(sandbox) == waiting, "a refused run replaced a launcher"
    dead = [uid for uid, pid in waiting.items() if not is_alive(pid)]
    assert dead == [], f"the waiting launcher of slot(s) {dead} was killed"
    # Every slot runs its next job on the launcher that waited for it.
    mount = SkillMount("acme.swap", real, "code/main.py")
    job = Job(mode="code", code=READ_SECRET, mounts=(mount,))
    outs = await asyncio.gather(*(sandbox.run(job, None) for _ in waiting))
    assert [(o.status, o.output) for o in outs] == [("completed", "NOT-A-SKILL")] * len(waiting)


async def _waiting_launchers(box: Sandbox) -> dict[int, int]:
    """Slot uid -> pid of the launcher started ahead for it."""
    assert box._warm is not None
    return {uid: (await pending).proc.pid for uid, pending in box._warm._pending.items()}


LEAVE_TRACES = (
    "import os\n"
    "def main(args):\n"
    "    seen = {}\n"
    "    for d in ('/tmp', '/dev/shm', '/workspace', '/skills'):\n"
    "        seen[d] = sorted(os.listdir(d))\n"
    "    for d in ('/tmp', '/dev/shm', '/workspace'):\n"
    "        open(d + '/trace-' + str(args['n']), 'w').write('x')\n"
    "    if os.fork() == 0:\n"
    "        os.setsid()\n"
    "        import time\n"
    "        time.sleep(60)\n"
    "        os._exit(0)\n"
    "    return seen\n"
)


async def test_nothing_of_a_run_reaches_the_next_pre_started_sandbox(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Every run gets a sandbox of its own: files, a lingering daemon and the skills of
    one run are not in the next one, which was started while the first was running."""
    if sandbox.tier == "degraded":
        # No private /tmp, /dev/shm or /skills there (documented degradation); its
        # fresh workspace is checked in test_workspace_is_fresh_for_every_run.
        assert sandbox.config.allow_degraded
        return
    mounts = []
    for name in ("acme.one", "acme.two", "acme.three", "acme.four"):
        skill = tmp_path / name
        (skill / "code").mkdir(parents=True)
        for p in (tmp_path, skill, skill / "code"):
            p.chmod(0o755)
        (skill / "code" / "main.py").write_text("X = 1\n")
        mounts.append(SkillMount(name, skill, "code/main.py"))
    for n, mount in enumerate(mounts):
        job = Job(mode="code", code=LEAVE_TRACES, mounts=(mount,), args={"n": n})
        out = await sandbox.run(job, None)
        assert out.status == "completed", out.error
        assert out.output == {
            "/tmp": [],
            "/dev/shm": [],
            "/workspace": [],
            "/skills": [mount.name],
        }, out.output
    await sandbox.idle()


def _isolate() -> object:
    sys.path.insert(0, str(GUEST_DIR))
    try:
        import isolate
    finally:
        sys.path.remove(str(GUEST_DIR))
    return isolate


@pytest.mark.parametrize("sent", [0, 1, 3])
def test_a_request_whose_skill_fds_do_not_match_fails_and_closes_them(
    tmp_path: Path, sent: int
) -> None:
    """The launcher takes exactly one fd per skill the request names, or none at all."""
    isolate = _isolate()
    server, inner = socket.socketpair()
    dirs = [os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY) for _ in range(sent)]
    try:
        if dirs:
            socket.send_fds(server, [b"S"], dirs)
        else:
            server.send(b"S")
        before = set(os.listdir("/proc/self/fd"))
        with pytest.raises(ValueError, match="expected 2 skill directories"):
            isolate._receive_skill_dirs(inner.fileno(), ["a.one", "a.two"])  # type: ignore[attr-defined]
        assert set(os.listdir("/proc/self/fd")) <= before
    finally:
        for fd in dirs:
            os.close(fd)
        server.close()
        inner.close()


def test_matching_skill_fds_are_taken_in_the_request_order(tmp_path: Path) -> None:
    isolate = _isolate()
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    server, inner = socket.socketpair()
    dirs = [os.open(tmp_path / n, os.O_RDONLY | os.O_DIRECTORY) for n in ("one", "two")]
    try:
        socket.send_fds(server, [b"S"], dirs)
        got = isolate._receive_skill_dirs(inner.fileno(), ["a.one", "a.two"])  # type: ignore[attr-defined]
        try:
            assert list(got) == ["a.one", "a.two"]
            assert [os.fstat(fd).st_ino for fd in got.values()] == [
                (tmp_path / n).stat().st_ino for n in ("one", "two")
            ]
        finally:
            for fd in got.values():
                os.close(fd)
    finally:
        for fd in dirs:
            os.close(fd)
        server.close()
        inner.close()
