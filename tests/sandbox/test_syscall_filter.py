"""The sandbox's seccomp program, checked decision by decision and against the kernel.

Three layers: a small classic-BPF interpreter runs the assembled program for both ABIs
over every rule (so a wrong jump or a swapped column shows as a wrong decision); the
syscall numbers are compared with the kernel headers on this host; and a child process
installs the real filter and calls each denied syscall as root, where the kernel alone
would answer something other than ``EPERM``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
import subprocess
from pathlib import Path

import pytest

from sandbox.guest import syscall_filter as sf

GUEST = Path(sf.__file__).resolve().parent
MACHINES = ("x86_64", "aarch64")
IS_ROOT = os.geteuid() == 0


def run_bpf(rows: list[tuple[int, int, int, int]], data: bytes) -> int:
    """Interpret the subset of classic BPF the filter uses over a ``seccomp_data``."""
    acc = 0
    pc = 0
    for _ in range(10_000):
        code, jt, jf, k = rows[pc]
        if code == sf.BPF_LD_W_ABS:
            (acc,) = struct.unpack_from("<I", data, k)
            pc += 1
        elif code == sf.BPF_RET_K:
            return k
        elif code == sf.BPF_JA:
            pc += 1 + k
        elif code in (sf.BPF_JEQ_K, sf.BPF_JGT_K, sf.BPF_JSET_K):
            taken = {
                sf.BPF_JEQ_K: acc == k,
                sf.BPF_JGT_K: acc > k,
                sf.BPF_JSET_K: bool(acc & k),
            }[code]
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"unexpected opcode {code:#x} at {pc}")
    raise AssertionError("the program does not terminate")


def decide(machine: str, nr: int, *args: int, arch: int | None = None) -> int:
    padded = [*args, 0, 0, 0, 0, 0, 0][:6]
    data = struct.pack("<iIQ6Q", nr, sf.AUDIT_ARCH[machine] if arch is None else arch, 0, *padded)
    return run_bpf(sf.program(machine), data)


def column(machine: str) -> int:
    return 0 if machine == "x86_64" else 1


@pytest.mark.parametrize("machine", MACHINES)
def test_every_denied_syscall_gets_eperm(machine: str) -> None:
    denied = 0
    for name, pair in sf.DENIED.items():
        number = pair[column(machine)]
        if number is None:
            continue
        assert decide(machine, number) == sf.RET_EPERM, name
        denied += 1
    assert denied >= 50


@pytest.mark.parametrize("machine", MACHINES)
def test_ordinary_syscalls_are_allowed(machine: str) -> None:
    # read write openat close mmap execve exit_group getpid socket wait4 futex
    ordinary = {
        "x86_64": [0, 1, 257, 3, 9, 59, 231, 39, 41, 61, 202, 436, 439],
        "aarch64": [63, 64, 56, 57, 222, 221, 94, 172, 198, 260, 98, 436, 439],
    }[machine]
    for nr in ordinary:
        assert decide(machine, nr) == sf.SECCOMP_RET_ALLOW, nr


@pytest.mark.parametrize("machine", MACHINES)
def test_clone_with_a_namespace_flag_is_refused_and_plain_fork_is_not(machine: str) -> None:
    clone = sf.CHECKED["clone"][column(machine)]
    sigchld = 17
    fork_like = 0x01200000 | sigchld  # CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
    thread = 0x003D0F00  # what glibc's pthread_create passes
    vfork = 0x00004100 | sigchld  # CLONE_VM | CLONE_VFORK (posix_spawn)
    for flags in (fork_like, thread, vfork):
        assert decide(machine, clone, flags) == sf.SECCOMP_RET_ALLOW, hex(flags)
    for flag in (
        sf.CLONE_NEWUSER,
        sf.CLONE_NEWNS,
        sf.CLONE_NEWNET,
        sf.CLONE_NEWPID,
        sf.CLONE_NEWIPC,
        sf.CLONE_NEWUTS,
        sf.CLONE_NEWCGROUP,
    ):
        assert decide(machine, clone, flag | sigchld) == sf.RET_EPERM, hex(flag)
        # Bits above 32 are ignored by the kernel; they do not hide the flag.
        assert decide(machine, clone, (1 << 40) | flag) == sf.RET_EPERM, hex(flag)


@pytest.mark.parametrize("machine", MACHINES)
def test_unshare_of_any_namespace_is_refused(machine: str) -> None:
    unshare = sf.CHECKED["unshare"][column(machine)]
    for flag in (sf.CLONE_NEWUSER, sf.CLONE_NEWNS, sf.CLONE_NEWNET, sf.CLONE_NEWTIME):
        assert decide(machine, unshare, flag) == sf.RET_EPERM, hex(flag)
    clone_files = 0x400
    assert decide(machine, unshare, clone_files) == sf.SECCOMP_RET_ALLOW


@pytest.mark.parametrize("machine", MACHINES)
def test_clone3_answers_enosys_so_libc_falls_back_to_clone(machine: str) -> None:
    assert decide(machine, sf.CHECKED["clone3"][column(machine)]) == sf.RET_ENOSYS


@pytest.mark.parametrize("machine", MACHINES)
def test_terminal_injection_ioctls_are_refused(machine: str) -> None:
    ioctl = sf.CHECKED["ioctl"][column(machine)]
    assert decide(machine, ioctl, 0, sf.TIOCSTI) == sf.RET_EPERM
    assert decide(machine, ioctl, 0, sf.TIOCLINUX) == sf.RET_EPERM
    # The request is an unsigned int: high bits set do not smuggle TIOCSTI through.
    assert decide(machine, ioctl, 0, (1 << 32) | sf.TIOCSTI) == sf.RET_EPERM
    tiocgwinsz, fionread = 0x5413, 0x541B
    for request in (tiocgwinsz, fionread):
        assert decide(machine, ioctl, 0, request) == sf.SECCOMP_RET_ALLOW


@pytest.mark.parametrize("machine", MACHINES)
def test_only_the_default_personality_is_allowed(machine: str) -> None:
    personality = sf.CHECKED["personality"][column(machine)]
    assert decide(machine, personality, 0) == sf.SECCOMP_RET_ALLOW
    assert decide(machine, personality, 0xFFFFFFFF) == sf.SECCOMP_RET_ALLOW
    addr_no_randomize, read_implies_exec, per_bsd = 0x0040000, 0x0400000, 0x0006
    for persona in (addr_no_randomize, read_implies_exec, per_bsd):
        assert decide(machine, personality, persona) == sf.RET_EPERM, hex(persona)


@pytest.mark.parametrize("machine", MACHINES)
def test_unknown_numbers_and_x32_get_enosys(machine: str) -> None:
    assert decide(machine, sf.MAX_KNOWN_NR + 1) == sf.RET_ENOSYS
    assert decide(machine, 0x40000000 | 0) == sf.RET_ENOSYS  # x32 read
    assert decide(machine, -1) == sf.RET_ENOSYS


@pytest.mark.parametrize("machine", MACHINES)
def test_a_foreign_abi_kills_the_process(machine: str) -> None:
    audit_arch_i386 = 0x40000003
    audit_arch_arm = 0x40000028
    for arch in (audit_arch_i386, audit_arch_arm):
        assert decide(machine, 0, arch=arch) == sf.SECCOMP_RET_KILL_PROCESS


def test_unknown_architecture_has_no_filter_and_fails_closed() -> None:
    with pytest.raises(sf.FilterError, match="riscv64"):
        sf.program("riscv64")


def test_assembler_refuses_bad_jumps() -> None:
    asm = sf._Asm()
    asm.jump(sf.BPF_JEQ_K, 1, "nowhere", 0)
    with pytest.raises(sf.FilterError, match="unknown label"):
        asm.assemble()
    asm = sf._Asm()
    asm.label("top")
    asm.jump(sf.BPF_JEQ_K, 1, "top", 0)
    with pytest.raises(sf.FilterError, match="backwards"):
        asm.assemble()
    asm = sf._Asm()
    asm.jump(sf.BPF_JEQ_K, 1, "far", 0)
    for _ in range(300):
        asm.load(0)
    asm.label("far")
    asm.ret(0)
    with pytest.raises(sf.FilterError, match="too far"):
        asm.assemble()


def test_encoding_is_struct_sock_filter() -> None:
    rows = sf.program("x86_64")
    blob = sf.encode(rows)
    assert len(blob) == 8 * len(rows)
    assert struct.unpack_from("=HBBI", blob, 0) == (sf.BPF_LD_W_ABS, 0, 0, sf.OFF_ARCH)


def _header_numbers(path: Path, prefixes: tuple[str, ...]) -> dict[str, int]:
    numbers: dict[str, int] = {}
    pattern = re.compile(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b")
    for match in pattern.finditer(path.read_text()):
        numbers.setdefault(match.group(1), int(match.group(2)))
    return numbers


@pytest.mark.parametrize(
    ("machine", "header"),
    [
        ("x86_64", Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")),
        ("aarch64", Path("/usr/include/asm-generic/unistd.h")),
    ],
)
def test_syscall_numbers_match_the_kernel_headers(machine: str, header: Path) -> None:
    if not header.is_file():
        pytest.skip(f"{header} is not installed (linux-libc-dev)")
    known = _header_numbers(header, ())
    table = {**sf.DENIED, **sf.CHECKED}
    compared = 0
    for name, pair in table.items():
        number = pair[column(machine)]
        if name in known:
            assert number == known[name], (machine, name)
            compared += 1
        elif number is not None:
            # Only syscalls newer than these headers may be missing from them.
            assert number > max(known.values()), (machine, name)
    assert compared >= 55


KERNEL_PROBE = r"""
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[1])
import syscall_filter as sf
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long

def call(name, *args):
    nr = {**sf.DENIED, **sf.CHECKED}[name][0 if os.uname().machine == "x86_64" else 1]
    ctypes.set_errno(0)
    ret = libc.syscall(L(nr), *[L(a) for a in args])
    return ret, ctypes.get_errno()

def probes():
    # Arguments a root process without the filter gets a different answer for, none of
    # which changes the host (NULL pointers, bad fds, bad magic numbers).
    yield "setns", (-1, 0)
    yield "mount", (0, 0, 0, 0, 0)
    yield "umount2", (0, 0)
    yield "pivot_root", (0, 0)
    yield "ptrace", (-1, 0, 0, 0)
    yield "process_vm_readv", (os.getpid(), 0, 0, 0, 0, 0)
    yield "keyctl", (0, -3, 0)
    yield "add_key", (0, 0, 0, 0, 0)
    yield "request_key", (0, 0, 0, 0)
    yield "bpf", (-1, 0, 0)
    yield "perf_event_open", (0, 0, -1, -1, 0)
    yield "init_module", (0, 0, 0)
    yield "finit_module", (-1, 0, 0)
    yield "delete_module", (0, 0)
    yield "kexec_load", (0, 0, 0, 0xDEAD)
    yield "settimeofday", (0, 0)
    yield "clock_settime", (0, 0)
    yield "clock_adjtime", (0, 0)
    yield "adjtimex", (0,)
    yield "userfaultfd", (-1,)
    yield "open_by_handle_at", (-1, 0, 0)
    yield "swapon", (0, 0)
    yield "swapoff", (0,)
    yield "reboot", (0, 0, 0, 0)
    yield "syslog", (10, 0, 0)
    yield "acct", (0,)
    yield "quotactl", (0, 0, 0, 0)
    yield "personality", (0x0040000,)
    yield "ioctl", (-1, sf.TIOCSTI, 0)
    yield "clone3", (0, 0)
    yield "io_uring_setup", (0, 0)
    yield "fsopen", (0, 0)
    yield "unshare", (sf.CLONE_NEWUSER,)  # last: without the filter it succeeds

results = {}
libc.prctl(38, 1, 0, 0, 0)
if sys.argv[2] == "on":
    sf.install(os.uname().machine, libc)
for name, args in probes():
    results[name] = call(name, *args)
print(json.dumps(results))
"""


def _probe(state: str) -> dict[str, list[int]]:
    done = subprocess.run(
        ["/usr/bin/python3", "-I", "-S", "-c", KERNEL_PROBE, str(GUEST), state],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, list[int]] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(not IS_ROOT, reason="root shows the filter, not missing capabilities")
def test_the_kernel_refuses_each_denied_syscall_even_for_root() -> None:
    with_filter = _probe("on")
    for name, (ret, err) in with_filter.items():
        expected = errno.ENOSYS if name == "clone3" else errno.EPERM
        assert (ret, err) == (-1, expected), name
    # Without the filter root gets other answers from most of them, so the EPERMs above
    # are the filter's doing and not the kernel's capability checks.
    without = _probe("off")
    differ = [name for name, pair in without.items() if tuple(pair) != tuple(with_filter[name])]
    assert len(differ) >= len(without) - 3, without
