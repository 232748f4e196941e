"""Hostile code against every tier: each run fails cleanly, the sandbox keeps working, and
nothing of the run survives (the fixture checks uids, mounts and cgroups at the end).

Numbers follow the abuse list in the sandbox design note. Network checks do not apply to
the degraded tier, which has no network isolation and is therefore refused by default
(see ``test_degraded_tier_is_refused_unless_allowed``).
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_testlib import IS_ROOT, assert_nothing_left, config_for, sandbox_processes

from sandbox import Job, Sandbox, SkillMount

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="needs root: sandbox tiers drop to slot uids")


def code(src: str, **kw: object) -> Job:
    return Job(mode="code", code=src, **kw)  # type: ignore[arg-type]


async def still_works(box: Sandbox) -> None:
    out = await box.run(code("def main(args):\n    return 'ok'\n"), None)
    assert out.status == "completed" and out.output == "ok", out.error


async def test_1_fork_bomb_is_capped_and_leaves_no_survivors(sandbox: Sandbox) -> None:
    src = "import os\ndef main(args):\n    while True:\n        os.fork()\n"
    out = await sandbox.run(code(src, timeout_s=5), None)
    assert out.status == "failed"
    assert out.error is not None and out.error.type in ("BlockingIOError", "TimeoutError")
    await sandbox.idle()
    assert sandbox_processes() == []
    await still_works(sandbox)


async def test_2_memory_bomb_fails_with_memory_error(sandbox: Sandbox) -> None:
    out = await sandbox.run(code("def main(args):\n    return len(bytearray(4 << 30))\n"), None)
    assert out.status == "failed"
    assert out.error is not None and out.error.type == "MemoryError"
    await still_works(sandbox)


async def test_2_many_children_under_the_per_process_limit_are_stopped(sandbox: Sandbox) -> None:
    if not sandbox.describe()["cgroups"]:
        pytest.skip("no writable memory cgroup on this host: only per-process limits apply")
    src = (
        "import os, time\n"
        "def main(args):\n"
        "    kids = []\n"
        "    for _ in range(6):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            block = b'x' * (300 << 20)\n"
        "            time.sleep(3)\n"
        "            os._exit(0)\n"
        "        kids.append(pid)\n"
        "    codes = [os.waitpid(k, 0)[1] for k in kids]\n"
        "    if any(codes):\n"
        "        raise MemoryError(f'children were killed: {codes}')\n"
        "    return 'all survived'\n"
    )
    out = await sandbox.run(code(src, timeout_s=20), None)
    assert out.status == "failed"
    assert out.error is not None and out.error.type in ("MemoryError", "Killed")
    await still_works(sandbox)


async def test_3_cpu_loop_is_killed_at_the_timeout(sandbox: Sandbox) -> None:
    out = await sandbox.run(
        code("def main(args):\n    while True:\n        pass\n", timeout_s=1), None
    )
    assert out.status == "failed"
    assert out.error is not None and out.error.type == "TimeoutError"
    await still_works(sandbox)


async def test_4_one_gigabyte_file_is_refused(sandbox: Sandbox) -> None:
    src = (
        "def main(args):\n"
        "    with open('big.bin', 'wb') as fh:\n"
        "        for _ in range(1024):\n"
        "            fh.write(b'\\0' * (1 << 20))\n"
    )
    out = await sandbox.run(code(src), None)
    assert out.status == "failed"
    assert out.error is not None and out.error.type == "OSError"
    assert "File too large" in out.error.message or "No space" in out.error.message
    await still_works(sandbox)


async def test_4_many_files_cannot_fill_workspace_tmp_or_shm(sandbox: Sandbox) -> None:
    if sandbox.tier == "degraded":
        pytest.skip("degraded tier has no private size-capped tmpfs (documented degradation)")
    for target in ("/workspace", "/tmp", "/dev/shm"):
        src = (
            "def main(args):\n"
            "    for i in range(200):\n"
            f"        with open('{target}/f%d' % i, 'wb') as fh:\n"
            "            fh.write(b'\\1' * (10 << 20))\n"
        )
        out = await sandbox.run(code(src), None)
        assert out.status == "failed", target
        assert out.error is not None and "No space left" in out.error.message, target
    await still_works(sandbox)


async def test_5_stdout_flood_stops_the_run(sandbox: Sandbox) -> None:
    src = (
        "import sys\n"
        "def main(args):\n"
        "    for _ in range(100):\n"
        "        sys.stdout.write('x' * (1 << 20))\n"
    )
    out = await sandbox.run(code(src), None)
    assert out.status == "failed"
    assert out.error is not None and out.error.type == "LogLimitExceeded"
    assert len(out.logs_preview.encode()) <= 2048
    await still_works(sandbox)


async def test_6_no_network_loopback_udp_ipv6_unix_or_dns(sandbox: Sandbox) -> None:
    if sandbox.tier == "degraded":
        pytest.skip("degraded tier has no network namespace (it is refused by default)")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    udp_listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp_listener.bind(("127.0.0.1", 0))
    udp_port = udp_listener.getsockname()[1]
    # Abstract socket names are one namespace per network namespace: a fixed name here was
    # taken by the same test of another suite on the host ([Errno 98]).
    abstract_name = f"\0noma-sandbox-test-{uuid.uuid4().hex}"
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(abstract_name.encode())
    abstract.listen()
    port = listener.getsockname()[1]
    src = (
        "import socket\n"
        "def attempt(fn):\n"
        "    try:\n"
        "        fn()\n"
        "        return 'connected'\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        "def main(args):\n"
        "    port = args['port']\n"
        "    def tcp():\n"
        "        socket.create_connection(('127.0.0.1', port), timeout=2)\n"
        "    def tcp6():\n"
        "        socket.create_connection(('::1', port), timeout=2)\n"
        "    def outside():\n"
        "        socket.create_connection(('192.0.2.1', 80), timeout=2)\n"
        "    def udp():\n"
        "        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "        s.sendto(b'x', ('127.0.0.1', args['udp']))\n"
        "    def dns():\n"
        "        socket.getaddrinfo('example.com', 80)\n"
        "    def unix():\n"
        "        s = socket.socket(socket.AF_UNIX)\n"
        "        s.settimeout(2)\n"
        "        s.connect(args['unix'].encode())\n"
        "    tries = [('tcp', tcp), ('tcp6', tcp6), ('outside', outside), ('udp', udp),\n"
        "             ('dns', dns), ('unix', unix)]\n"
        "    return {n: attempt(f) for n, f in tries}\n"
    )
    try:
        args = {"port": port, "udp": udp_port, "unix": abstract_name}
        out = await sandbox.run(code(src, args=args), None)
        udp_listener.settimeout(0.3)
        with pytest.raises(TimeoutError):
            udp_listener.recvfrom(16)  # a datagram sent inside stays on the sandbox's own lo
    finally:
        listener.close()
        udp_listener.close()
        abstract.close()
    assert out.status == "completed", out.error
    udp = out.output.pop("udp")
    assert udp in ("connected", "OSError"), udp  # sendto may "succeed" into its own loopback
    assert "connected" not in out.output.values(), out.output


async def test_7_root_only_files_and_server_process_are_unreadable(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    skill = tmp_path / "acme.box"
    (skill / "code").mkdir(parents=True)
    tmp_path.chmod(0o755)
    (skill / "code" / "main.py").write_text("X = 1\n")
    secret = skill / "root-only.txt"
    secret.write_text("TOP-SECRET")
    secret.chmod(0o600)
    src = (
        "def main(args):\n"
        "    results = {}\n"
        "    for path in ['/skills/acme.box/root-only.txt', args['host_copy'], '/etc/shadow',\n"
        "                 '/root/.bash_history', '/proc/1/environ',\n"
        "                 f\"/proc/{args['server']}/environ\"]:\n"
        "        try:\n"
        "            results[path] = open(path, errors='replace').read()[:50]\n"
        "        except OSError as exc:\n"
        "            results[path] = type(exc).__name__\n"
        "    return results\n"
    )
    mount = SkillMount("acme.box", skill, "code/main.py")
    out = await sandbox.run(
        code(src, mounts=(mount,), args={"server": os.getpid(), "host_copy": str(secret)}), None
    )
    assert out.status == "completed", out.error
    for path, got in out.output.items():
        assert got in ("PermissionError", "FileNotFoundError"), (path, got)


async def test_8_server_environment_never_reaches_the_run(sandbox: Sandbox) -> None:
    os.environ["NOMA_TEST_SERVER_SECRET"] = "server-secret-value"
    try:
        src = (
            "import os\n"
            "def main(args):\n"
            "    found = [k for k, v in os.environ.items() if 'server-secret' in v]\n"
            "    for pid in os.listdir('/proc'):\n"
            "        try:\n"
            "            if b'server-secret' in open(f'/proc/{pid}/environ', 'rb').read():\n"
            "                found.append(pid)\n"
            "        except OSError:\n"
            "            pass\n"
            "    return found\n"
        )
        out = await sandbox.run(code(src), None)
    finally:
        del os.environ["NOMA_TEST_SERVER_SECRET"]
    assert out.status == "completed", out.error
    assert out.output == []


class Latch:
    """A blob bridge that tells the test when a run is up (it wrote a blob) and keeps the
    run waiting until the test lets it go (the blob it polls for appears): the run is alive
    for as long as the test needs, whatever the machine's load, with no sleep."""

    GO = "blob:" + "6" * 32

    def __init__(self) -> None:
        self.up = asyncio.Event()
        self.go = False

    def read_chunks(self, blob_id: str, chunk_chars: int) -> Iterator[str]:
        if blob_id != self.GO or not self.go:
            raise KeyError(blob_id)
        return iter(["go"])

    def open_writer(self, kind: str) -> Latch:
        return self

    def write(self, text: str) -> None:
        pass

    def commit(self) -> str:
        self.up.set()
        return "blob:" + "7" * 32

    def abort(self) -> None:
        pass


async def test_9_a_run_cannot_kill_or_see_a_concurrent_run(sandbox: Sandbox) -> None:
    victim = code(
        "import time\n"
        "from runtime import blobs\n"
        "def main(args):\n"
        "    blobs.write_text('up')\n"
        "    while True:\n"
        "        try:\n"
        "            blobs.read_text(args['go'])\n"
        "            return 'alive'\n"
        "        except blobs.ChannelError:\n"
        "            time.sleep(0.01)  # the test has not let it go yet\n",
        args={"go": Latch.GO},
        input_blobs=(Latch.GO,),
    )
    killer = code(
        "import os, signal\n"
        "def main(args):\n"
        "    try:\n"
        "        os.kill(-1, signal.SIGKILL)\n"
        "    except ProcessLookupError:\n"
        "        pass  # nothing else to signal: expected\n"
        "    return 'tried'\n"
    )
    latch = Latch()
    slow = asyncio.ensure_future(sandbox.run(victim, latch))
    up = asyncio.ensure_future(latch.up.wait())
    await asyncio.wait({slow, up}, return_when=asyncio.FIRST_COMPLETED)
    assert latch.up.is_set(), slow.result()  # the victim runs (else: why it ended)
    attack = await sandbox.run(killer, None)
    latch.go = True
    survived = await slow
    assert attack.status == "completed", attack.error  # kill(-1) reached nothing else
    assert survived.status == "completed" and survived.output == "alive", survived.error


async def test_10_writes_outside_workspace_fail(sandbox: Sandbox) -> None:
    src = (
        "def main(args):\n"
        "    results = {}\n"
        "    for path in ['/usr/planted', '/etc/planted', '/opt/noma/runtime/planted.py',\n"
        "                 '/planted', args['guest']]:\n"
        "        try:\n"
        "            open(path, 'w').write('x')\n"
        "            results[path] = 'written'\n"
        "        except OSError as exc:\n"
        "            results[path] = type(exc).__name__\n"
        "    return results\n"
    )
    guest = str(Path(__file__).resolve().parents[2] / "sandbox" / "guest" / "planted.py")
    out = await sandbox.run(code(src, args={"guest": guest}), None)
    assert out.status == "completed", out.error
    assert "written" not in out.output.values(), out.output
    assert not Path(guest).exists()


async def test_11_symlink_out_of_workspace_reads_nothing_and_cleanup_does_not_follow(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep me")
    tmp_path.chmod(0o755)
    src = (
        "import os\n"
        "def main(args):\n"
        "    os.symlink('/etc/shadow', 'shadow')\n"
        "    os.symlink(args['precious'], 'dirlink')\n"
        "    try:\n"
        "        return open('shadow').read()\n"
        "    except OSError as exc:\n"
        "        raise PermissionError(f'blocked: {exc}') from None\n"
    )
    out = await sandbox.run(code(src, args={"precious": str(precious)}), None)
    assert out.status == "failed"
    assert out.error is not None and out.error.type == "PermissionError"
    await sandbox.idle()
    assert (precious / "keep.txt").read_text() == "keep me"


async def test_12_daemons_do_not_survive_the_run(sandbox: Sandbox) -> None:
    src = (
        "import os, time\n"
        "def main(args):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "        os._exit(0)\n"
        "    time.sleep(0.2)\n"
        "    return 'spawned'\n"
    )
    out = await sandbox.run(code(src), None)
    assert out.status == "completed", out.error
    await sandbox.idle()
    assert sandbox_processes() == []


async def test_13_no_capabilities_no_setuid_no_nested_namespaces(sandbox: Sandbox) -> None:
    src = (
        "import os, shutil, subprocess\n"
        "def main(args):\n"
        "    caps = {l.split(':')[0]: l.split()[1] for l in open('/proc/self/status')\n"
        "            if l.startswith('Cap')}\n"
        "    nested = subprocess.run(['unshare', '-n', 'true'], capture_output=True).returncode\n"
        "    shutil.copy('/usr/bin/id', 'myid')\n"
        "    os.chmod('myid', 0o4755)\n"
        "    euid = subprocess.run(['./myid', '-u'], capture_output=True, text=True).stdout\n"
        "    nnp = [l for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0]\n"
        "    return {'caps': caps, 'nested': nested, 'euid': euid.strip(), 'nnp': nnp.split()[1]}\n"
    )
    out = await sandbox.run(code(src), None)
    assert out.status == "completed", out.error
    assert int(out.output["caps"]["CapEff"], 16) == 0
    assert int(out.output["caps"]["CapPrm"], 16) == 0
    assert out.output["nested"] != 0
    assert out.output["euid"] != "0"
    assert out.output["nnp"] == "1"


async def test_14_only_the_run_pipes_are_open(sandbox: Sandbox) -> None:
    src = (
        "import os\n"
        "def main(args):\n"
        "    fds = {}\n"
        "    for fd in os.listdir('/proc/self/fd'):\n"
        "        try:\n"
        "            fds[fd] = os.readlink(f'/proc/self/fd/{fd}')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return fds\n"
    )
    out = await sandbox.run(code(src), None)
    assert out.status == "completed", out.error
    targets = set(out.output.values())
    # stdin is /dev/null; stdout/stderr are the log pipe; two more pipes are the run's own
    # control channel; the listing itself holds one directory fd.
    assert len(out.output) <= 6, out.output
    for target in targets:
        assert target.startswith("pipe:") or target == "/dev/null" or "/proc/" in target, target


async def test_15_interpreter_is_isolated_from_environment_and_site(sandbox: Sandbox) -> None:
    src = (
        "import sys\n"
        "def main(args):\n"
        "    return {'isolated': sys.flags.isolated, 'no_site': sys.flags.no_site,\n"
        "            'site': 'site' in sys.modules,\n"
        "            'sitecustomize': 'sitecustomize' in sys.modules,\n"
        "            'cwd_on_path': '' in sys.path or '.' in sys.path}\n"
    )
    out = await sandbox.run(code(src), None)
    assert out.status == "completed", out.error
    assert out.output == {
        "isolated": 1,
        "no_site": 1,
        "site": False,
        "sitecustomize": False,
        "cwd_on_path": False,
    }


async def test_degraded_tier_is_refused_unless_allowed() -> None:
    from dataclasses import replace

    box = Sandbox(replace(config_for("degraded"), allow_degraded=False))
    await box.start()
    try:
        reason = box.unavailable_reason
        assert reason is not None and "NOMA_SANDBOX_ALLOW_DEGRADED" in reason
        out = await box.run(code("def main(args):\n    return 1\n"), None)
        assert out.status == "failed"
        assert out.error is not None and out.error.type == "IsolationUnavailable"
    finally:
        await box.close()
    assert_nothing_left(box)


def test_guest_code_is_not_writable_by_sandbox_uids() -> None:
    """The launcher and runtime run as root before the drop: no other uid may edit them."""
    guest = Path(__file__).resolve().parents[2] / "sandbox" / "guest"
    for path in [guest, *guest.rglob("*")]:
        st = os.stat(path)
        assert st.st_uid == 0 or not IS_ROOT, path
        assert not stat.S_IMODE(st.st_mode) & 0o022, path


# 16. The kernel's attack surface: each syscall sandbox escapes are built from is refused
# by the seccomp filter (EPERM; clone3 ENOSYS so libc falls back to clone, whose flags the
# filter reads). Numbers come from the filter's table, which test_syscall_filter checks
# against the kernel headers.
KERNEL_SURFACE_SRC = r"""
import ctypes, os
from sandbox_syscalls import NUMBERS
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x20000, 0x40000000, 17

def call(name, *args):
    return call_nr(NUMBERS[name], *args, clone=name == "clone")

def call_nr(nr, *args, clone=False):
    ctypes.set_errno(0)
    ret = libc.syscall(L(nr), *[L(a) for a in args])
    if ret == 0 and clone:
        os._exit(0)  # a child the filter let through: leave at once
    return [ret, ctypes.get_errno()]

def main(args):
    page = ctypes.create_string_buffer(4096)
    buf = ctypes.addressof(page)
    tty = os.open("/dev/null", os.O_RDONLY)
    got = {
        "unshare(NEWUSER)": call("unshare", CLONE_NEWUSER),
        "unshare(NEWNS|NEWNET)": call("unshare", CLONE_NEWNS | CLONE_NEWNET),
        "clone(NEWUSER)": call("clone", CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0),
        "clone3": call("clone3", buf, 88),
        "setns": call("setns", 0, 0),
        "mount": call("mount", 0, buf, 0, 0, 0),
        "umount2": call("umount2", buf, 0),
        "pivot_root": call("pivot_root", buf, buf),
        "ptrace": call("ptrace", 0, 0, 0, 0),
        "process_vm_readv": call("process_vm_readv", os.getpid(), 0, 0, 0, 0, 0),
        "process_vm_writev": call("process_vm_writev", os.getpid(), 0, 0, 0, 0, 0),
        "keyctl": call("keyctl", 0, -3, 0),
        "add_key": call("add_key", 0, 0, 0, 0, -2),
        "request_key": call("request_key", 0, 0, 0, 0),
        "bpf": call("bpf", 0, buf, 8),
        "perf_event_open": call("perf_event_open", buf, 0, -1, -1, 0),
        "init_module": call("init_module", 0, 0, 0),
        "finit_module": call("finit_module", tty, 0, 0),
        "delete_module": call("delete_module", buf, 0),
        "kexec_load": call("kexec_load", 0, 0, 0, 0),
        "settimeofday": call("settimeofday", 0, 0),
        "clock_settime": call("clock_settime", 0, buf),
        "clock_adjtime": call("clock_adjtime", 0, buf),
        "adjtimex": call("adjtimex", buf),
        "userfaultfd": call("userfaultfd", 0),
        "open_by_handle_at": call("open_by_handle_at", tty, buf, 0),
        "swapon": call("swapon", buf, 0),
        "swapoff": call("swapoff", buf),
        "reboot": call("reboot", 0, 0, 0, 0),
        "syslog": call("syslog", 10, 0, 0),
        "acct": call("acct", 0),
        "quotactl": call("quotactl", 0, 0, 0, 0),
        "personality(ADDR_NO_RANDOMIZE)": call("personality", 0x0040000),
        "ioctl(TIOCSTI)": call("ioctl", tty, 0x5412, buf),
        "io_uring_setup": call("io_uring_setup", 1, buf),
        "fsopen": call("fsopen", buf, 0),
        "open_tree": call("open_tree", -100, buf, 0),
        # The same calls by other doors: the x32 ABI's numbers (bit 30) and request bits
        # above the 32 the kernel reads.
        "x32 unshare(NEWUSER)": call_nr(0x40000000 | NUMBERS["unshare"], CLONE_NEWUSER),
        "x32 mount": call_nr(0x40000000 | NUMBERS["mount"], 0, buf, 0, 0, 0),
        "ioctl(TIOCSTI | 1 << 32)": call("ioctl", tty, (1 << 32) | 0x5412, buf),
    }
    import subprocess
    child = subprocess.run(['unshare', '-Ur', 'true'], capture_output=True, text=True)
    got["child: unshare -Ur"] = [child.returncode, 1 if 'Operation not permitted' in
                                 child.stderr else 0]
    status = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
    return {"calls": got, "seccomp": status["Seccomp"].strip(),
            "nnp": status["NoNewPrivs"].strip()}
"""


def syscall_numbers() -> dict[str, int]:
    """The host ABI's numbers of the filtered syscalls."""
    from sandbox.guest import syscall_filter as sf

    col = 0 if os.uname().machine == "x86_64" else 1
    pairs = {**sf.DENIED, **sf.CHECKED}
    return {name: pair[col] for name, pair in pairs.items() if pair[col] is not None}


async def test_16_kernel_attack_surface_syscalls_are_refused(sandbox: Sandbox) -> None:
    src = KERNEL_SURFACE_SRC.replace(
        "from sandbox_syscalls import NUMBERS", f"NUMBERS = {syscall_numbers()!r}"
    )
    out = await sandbox.run(code(src, timeout_s=10), None)
    assert out.status == "completed", out.error
    assert out.output["seccomp"] == "2", out.output
    assert out.output["nnp"] == "1"
    calls = out.output["calls"]
    assert calls.pop("child: unshare -Ur") == [1, 1], "a child process escaped the filter"
    for name, (ret, err) in calls.items():
        expected = errno.ENOSYS if name == "clone3" or name.startswith("x32") else errno.EPERM
        assert (ret, err) == (-1, expected), (name, ret, os.strerror(err))
    await still_works(sandbox)


PROC_PATHS_SRC = r"""
import os
def main(args):
    seen = {}
    pids = args['pids'] or [p for p in os.listdir('/proc') if p.isdigit()] + ['self']
    for pid in pids:
        for name in ('cmdline', 'environ', 'maps', 'cgroup', 'comm', 'stat', 'status'):
            try:
                seen[f'/proc/{pid}/{name}'] = open(f'/proc/{pid}/{name}', 'rb').read().decode(
                    errors='replace')
            except OSError:
                pass
        for link in ('exe', 'cwd', 'root'):
            try:
                seen[f'/proc/{pid}/{link}'] = os.readlink(f'/proc/{pid}/{link}')
            except OSError:
                pass
        try:
            for fd in os.listdir(f'/proc/{pid}/fd'):
                try:
                    seen[f'/proc/{pid}/fd/{fd}'] = os.readlink(f'/proc/{pid}/fd/{fd}')
                except OSError:
                    pass
        except OSError:
            pass
    hits = [[where, m, text[:200]] for where, text in seen.items()
            for m in args['markers'] if m in text]
    # A bind mount shows its source in mountinfo: neither the checkout nor a skill's
    # folder in the workspace may be one.
    mountinfo = open('/proc/self/mountinfo').read()
    hits += [['/proc/self/mountinfo', m, ''] for m in args['mount_markers'] if m in mountinfo]
    return {'hits': hits, 'cmdlines': sum(1 for k, v in seen.items()
                                          if k.endswith('/cmdline') and v),
            'maps': sum(1 for k, v in seen.items() if k.endswith('/maps') and v),
            'pid1': seen.get('/proc/1/cmdline', '').replace(chr(0), ' ')}
"""


async def test_17_no_host_path_is_visible_in_proc(sandbox: Sandbox, tmp_path: Path) -> None:
    """cmdline, environ, maps, cgroup and fd links of every process a run can see name
    sandbox paths only: not the checkout, the skill's folder, the scratch dir or cgroups.

    The degraded tier shares the host's pid namespace and runs in a scratch dir on the
    host, so there only the run's own process is checked, and not for the scratch dir."""
    skill = tmp_path / "host-skill-folder-marker" / "acme.box"
    (skill / "code").mkdir(parents=True)
    for p in (tmp_path, skill.parent):
        p.chmod(0o755)
    (skill / "code" / "main.py").write_text("X = 1\n")
    mount = SkillMount("acme.box", skill, "code/main.py")
    checkout = str(Path(__file__).resolve().parents[2])
    markers = [checkout, "host-skill-folder-marker", str(tmp_path), "cgroup.procs"]
    pids: list[str] = []
    if sandbox.tier == "degraded":
        pids = ["self"]
    else:
        markers.append("noma-sandbox")
    mount_markers = [checkout, "host-skill-folder-marker", str(tmp_path)]
    args = {"markers": markers, "pids": pids, "mount_markers": mount_markers}
    out = await sandbox.run(code(PROC_PATHS_SRC, mounts=(mount,), args=args), None)
    assert out.status == "completed", out.error
    assert out.output["hits"] == []
    assert out.output["cmdlines"] >= len(pids or [1, 2]) and out.output["maps"] >= 1, out.output
    if not pids:
        assert out.output["pid1"].strip(), "pid 1's command line was not readable"
    await still_works(sandbox)


async def test_18_hostile_skill_folders_are_staged_without_following_anything(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Skills reach a run as copies (so their workspace path is in no mountinfo): the copy
    must not hang on a fifo, follow a symlink out of the skill, or widen a file's mode."""
    skill = tmp_path / "acme.evil"
    (skill / "code" / "deep" / "deeper").mkdir(parents=True)
    for p in (tmp_path, skill, skill / "code", skill / "code" / "deep"):
        p.chmod(0o755)
    (skill / "code" / "main.py").write_text("X = 1\n")
    (skill / "code" / "deep" / "deeper" / "data.txt").write_text("nested")
    (skill / "code" / "deep" / "deeper").chmod(0o755)
    (skill / "code" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (skill / "code" / "run.sh").chmod(0o755)
    os.mkfifo(skill / "code" / "pipe")
    (skill / "code" / "shadow").symlink_to("/etc/shadow")
    (skill / "code" / "up").symlink_to("../../..")
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("OUTSIDE")
    (skill / "code" / "outside").symlink_to(secret)
    src = (
        "import os, subprocess\n"
        "def main(args):\n"
        "    import skills.acme.evil as skill\n"
        "    base = os.path.dirname(skill.__file__)  # /skills/acme.evil/code\n"
        "    def probe(p):\n"
        "        try:\n"
        "            return open(p).read()[:20]\n"
        "        except OSError as exc:\n"
        "            return type(exc).__name__\n"
        "    return {\n"
        "        'names': sorted(os.listdir(base)),\n"
        "        'nested': probe(base + '/deep/deeper/data.txt'),\n"
        "        'shadow': probe(base + '/shadow'),\n"
        "        'outside': probe(base + '/outside'),\n"
        "        'links': [os.readlink(base + '/shadow'), os.readlink(base + '/up')],\n"
        "        'exec': subprocess.run([base + '/run.sh'], capture_output=True,\n"
        "                               text=True).stdout,\n"
        "        'writable': os.access(base, os.W_OK),\n"
        "    }\n"
    )
    mount = SkillMount("acme.evil", skill, "code/main.py")
    out = await sandbox.run(code(src, mounts=(mount,)), None)
    assert out.status == "completed", out.error
    got = out.output
    assert got["names"] == ["deep", "main.py", "outside", "run.sh", "shadow", "up"]
    assert got["nested"] == "nested"
    assert got["shadow"] in ("FileNotFoundError", "PermissionError")
    assert got["outside"] in ("FileNotFoundError", "PermissionError")
    assert got["links"] == ["/etc/shadow", "../../.."]
    assert got["exec"] == "ran\n"
    assert got["writable"] is False
    await still_works(sandbox)


async def test_18_a_skill_larger_than_the_skills_area_fails_the_run_clearly(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    if sandbox.tier == "degraded":
        # Copied by the server into its scratch dir, bounded by the host's disk only.
        assert sandbox.config.limits.skills_bytes > 0
        return
    skill = tmp_path / "acme.huge"
    (skill / "code").mkdir(parents=True)
    for p in (tmp_path, skill, skill / "code"):
        p.chmod(0o755)
    (skill / "code" / "main.py").write_text("X = 1\n")
    with open(skill / "code" / "blob.bin", "wb") as fh:
        fh.truncate(sandbox.config.limits.skills_bytes + (8 << 20))  # sparse: no disk used
    mount = SkillMount("acme.huge", skill, "code/main.py")
    out = await sandbox.run(code("def main(args):\n    return 1\n", mounts=(mount,)), None)
    assert out.status == "failed"
    assert out.error is not None and "skills area" in out.error.message, out.error
    await still_works(sandbox)
