"""The seccomp filter every sandbox run lives under, as a classic BPF program built here.

Why a filter at all: namespaces, rlimits and the slot uid keep a run away from the host's
files, network and processes, but every syscall still reaches the kernel. Real sandbox
escapes go through the kernel's rarely used, privilege-adjacent surface: new user
namespaces (which hand out capabilities over fresh mount/net namespaces), the mount API,
``ptrace``, keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``, module
and clock syscalls. Like Docker's default profile and nsjail's, the filter refuses those
with ``EPERM`` and leaves everything Python and ordinary libraries use alone.

Why hand-built BPF instead of libseccomp: this module runs under the system interpreter
inside the sandbox, outside the project's venv, and must stay stdlib-only (see
``isolate``). The program is small and fixed, so a tiny label-resolving assembler is
enough, and the tests check it twice: decision by decision in a BPF interpreter, and
against the real kernel.

Decisions, in order:
1. a syscall of a foreign ABI (i386 ``int 0x80`` on x86_64, AArch32 on arm64) kills the
   process: its numbers mean other syscalls;
2. a number above the newest syscall this table knows (including every x32 number) gets
   ``ENOSYS``, so a kernel newer than this file adds no surface and libc falls back;
3. ``clone3`` gets ``ENOSYS``: its flags live in memory the filter cannot read, and libc
   falls back to ``clone``, whose flags it can;
4. ``clone``/``unshare`` with any new-namespace flag, ``ioctl(TIOCSTI/TIOCLINUX)`` and
   ``personality`` other than the default (or a query) get ``EPERM``;
5. the denied syscalls below get ``EPERM``; everything else is allowed.
"""

from __future__ import annotations

import struct

# BPF opcodes (linux/filter.h, linux/bpf_common.h).
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGT_K = 0x25  # BPF_JMP | BPF_JGT | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
BPF_JA = 0x05  # BPF_JMP | BPF_JA
BPF_RET_K = 0x06  # BPF_RET | BPF_K

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
EPERM = 1
ENOSYS = 38
RET_EPERM = SECCOMP_RET_ERRNO | EPERM
RET_ENOSYS = SECCOMP_RET_ERRNO | ENOSYS

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6].
OFF_NR = 0
OFF_ARCH = 4


def off_arg_low(index: int) -> int:
    """Offset of the low 32 bits of syscall argument ``index`` (both ABIs are little-endian)."""
    return 16 + 8 * index


AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Newest syscall number this table knows on both ABIs (file_setattr, Linux 6.17). Anything
# above is a syscall added later, an x32 call (bit 30) or garbage: ENOSYS.
MAX_KNOWN_NR = 469

# Namespace flags of clone()/unshare(): CLONE_NEWTIME (0x80) overlaps the exit-signal byte of
# clone(), so it is only checked for unshare().
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWTIME = 0x00000080
CLONE_NS_FLAGS = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
)
UNSHARE_NS_FLAGS = CLONE_NS_FLAGS | CLONE_NEWTIME

TIOCSTI = 0x5412  # push bytes into a terminal's input queue (types commands for its owner)
TIOCLINUX = 0x541C  # console selection/paste, the same trick on a VT
PER_LINUX = 0x0000
PERSONALITY_QUERY = 0xFFFFFFFF

# name: (x86_64, aarch64); None where the ABI has no such syscall.
DENIED: dict[str, tuple[int | None, int | None]] = {
    # namespaces and the mount API
    "setns": (308, 268),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "open_tree_attr": (467, 467),
    # other processes' memory
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "kcmp": (312, 272),
    "pidfd_getfd": (438, 438),
    # kernel keyrings
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    # kernel programs, profiling and hard-to-harden kernel interfaces
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "fanotify_init": (300, 262),
    "lookup_dcookie": (212, 18),
    # modules and kexec
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "create_module": (174, None),
    "get_kernel_syms": (177, None),
    "query_module": (178, None),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    # clocks
    "settimeofday": (164, 170),
    "clock_settime": (227, 112),
    "clock_adjtime": (305, 266),
    "adjtimex": (159, 171),
    # files by handle (escapes a bind mount when permitted)
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    # host administration
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "syslog": (103, 116),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "quotactl_fd": (443, 443),
    "sethostname": (170, 161),
    "setdomainname": (171, 162),
    "vhangup": (153, 58),
    "nfsservctl": (180, 42),
    "iopl": (172, None),
    "ioperm": (173, None),
    "uselib": (134, None),
    "_sysctl": (156, None),
}

# Syscalls with an argument check, and clone3: name -> (x86_64, aarch64).
CHECKED: dict[str, tuple[int, int]] = {
    "clone": (56, 220),
    "clone3": (435, 435),
    "unshare": (272, 97),
    "ioctl": (16, 29),
    "personality": (135, 92),
}


class FilterError(OSError):
    """The filter could not be built or installed: the run must not start without it."""


class _Asm:
    """A classic BPF program with symbolic jump targets, resolved by ``assemble``."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((BPF_LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, true: object = 0, false: object = 0) -> None:
        """Conditional jump; a target is a label name or 0 (fall through)."""
        self.code.append((op, true, false, k))

    def goto(self, target: str) -> None:
        self.code.append((BPF_JA, 0, 0, target))  # type: ignore[arg-type]

    def ret(self, value: int) -> None:
        self.code.append((BPF_RET_K, 0, 0, value))

    def assemble(self) -> list[tuple[int, int, int, int]]:
        out: list[tuple[int, int, int, int]] = []
        for pc, (op, jt, jf, k) in enumerate(self.code):
            if op == BPF_JA:
                k = self._offset(pc, k)
            else:
                jt, jf = self._offset(pc, jt), self._offset(pc, jf)
                if jt > 255 or jf > 255:
                    raise FilterError(f"BPF jump at {pc} is too far for an 8-bit offset")
            out.append((op, jt, jf, k))  # type: ignore[arg-type]
        return out

    def _offset(self, pc: int, target: object) -> int:
        if target == 0:
            return 0
        if not isinstance(target, str) or target not in self.labels:
            raise FilterError(f"BPF jump at {pc} to an unknown label {target!r}")
        offset = self.labels[target] - pc - 1
        if offset < 0:
            raise FilterError(f"BPF jump at {pc} goes backwards to {target!r}")
        return offset


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (``os.uname().machine``) as (code, jt, jf, k) rows."""
    if machine not in AUDIT_ARCH:
        raise FilterError(f"no syscall filter is defined for the {machine!r} architecture")
    column = 0 if machine == "x86_64" else 1
    nr = {name: pair[column] for name, pair in CHECKED.items()}
    a = _Asm()
    a.load(OFF_ARCH)
    a.jump(BPF_JEQ_K, AUDIT_ARCH[machine], 0, "kill")
    a.load(OFF_NR)
    a.jump(BPF_JGT_K, MAX_KNOWN_NR, "enosys", 0)
    a.jump(BPF_JEQ_K, nr["clone3"], "enosys", 0)
    a.jump(BPF_JEQ_K, nr["clone"], "clone", 0)
    a.jump(BPF_JEQ_K, nr["unshare"], "unshare", 0)
    a.jump(BPF_JEQ_K, nr["ioctl"], "ioctl", 0)
    a.jump(BPF_JEQ_K, nr["personality"], "personality", 0)
    for pair in DENIED.values():
        number = pair[column]
        if number is not None:
            a.jump(BPF_JEQ_K, number, "eperm", 0)
    a.goto("allow")
    a.label("clone")  # clone(flags, ...): only the low 32 bits are flags
    a.load(off_arg_low(0))
    a.jump(BPF_JSET_K, CLONE_NS_FLAGS, "eperm", "allow")
    a.label("unshare")  # unshare(int flags)
    a.load(off_arg_low(0))
    a.jump(BPF_JSET_K, UNSHARE_NS_FLAGS, "eperm", "allow")
    a.label("ioctl")  # ioctl(fd, unsigned int request, ...)
    a.load(off_arg_low(1))
    a.jump(BPF_JEQ_K, TIOCSTI, "eperm", 0)
    a.jump(BPF_JEQ_K, TIOCLINUX, "eperm", "allow")
    a.label("personality")  # personality(unsigned int persona)
    a.load(off_arg_low(0))
    a.jump(BPF_JEQ_K, PER_LINUX, "allow", 0)
    a.jump(BPF_JEQ_K, PERSONALITY_QUERY, "allow", "eperm")
    a.label("allow")
    a.ret(SECCOMP_RET_ALLOW)
    a.label("eperm")
    a.ret(RET_EPERM)
    a.label("enosys")
    a.ret(RET_ENOSYS)
    a.label("kill")
    a.ret(SECCOMP_RET_KILL_PROCESS)
    return a.assemble()


def encode(rows: list[tuple[int, int, int, int]]) -> bytes:
    """``struct sock_filter[]`` in native byte order, as the kernel reads it."""
    return b"".join(struct.pack("=HBBI", *row) for row in rows)


def install(machine: str, libc: object) -> None:
    """Put the calling thread (and everything it starts) under the filter, for good.

    The caller has set ``no_new_privs`` (the kernel refuses an unprivileged filter without
    it) and must be single-threaded: a filter applies to the calling thread only.
    """
    import ctypes

    blob = encode(program(machine))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(blob, len(blob))
    prog = SockFprog(len(blob) // 8, ctypes.addressof(buf))
    prctl = libc.prctl  # type: ignore[attr-defined]
    if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise FilterError(err, f"installing the seccomp filter failed: {err}")
