"""Stage 0 of every sandbox run: isolate, limit, drop privileges, then hand over to `runtime`.

Started by the server through ``launcher.py`` (``/usr/bin/python3 -I -S``) with an empty
environment, in a new session, with three pipes: stdin (request, then server replies),
stdout (control records from the sandbox) and stderr (the run's logs). It runs as root and
must stay stdlib-only: it runs under the system interpreter, outside the project's venv,
and imports nothing but this directory (``-I`` ignores PYTHON* variables and user site).

The server starts one launcher per idle slot ahead of time (see ``sandbox/warm.py``): it
arms its death signal, joins the slot's cgroups and imports what a run needs, then blocks
on its request. The request is ``<length>\\n<marshal>`` so no JSON parser is loaded.

Why one Python process does the namespace and mount work itself (through ``ctypes``)
instead of chaining ``unshare``/``prlimit``/``setpriv``: every exec of a fresh interpreter
costs ~10 ms, and the run is expected to cost at most ~3 bare interpreter spawns. The
server never uses ``preexec_fn`` (unsafe in a threaded server); all privileged setup
happens here, in a single-threaded process.

Process tree for the ``namespaces`` tier::

    server -> launcher (root, host pid ns, subreaper)
                 -> init (root, pid 1 of a new pid/net/mount/ipc/uts ns; reaps; when it
                    exits the kernel kills everything left in the namespace)
                     -> worker (slot uid, rlimits, no capabilities) -> user code

Every tier ends the worker's setup the same way: rlimits, the privilege drop (which sets
``no_new_privs``), a clean environment, then the seccomp filter of ``syscall_filter``;
only then is anything of the run imported or executed.

No host path reaches the sandbox's ``/proc``: the server starts the launcher as
``python -I -S /proc/self/fd/N/launcher.py`` through an fd of its staged guest copy and
hands over the slot's ``cgroup.procs`` files as fds too, so the command line a run can
read in ``/proc/self/cmdline`` (and ``/proc/1/cmdline`` on the namespaces tier) names
none; bubblewrap gets its options through a memfd (``--args``).

For the ``bubblewrap`` tier the launcher execs bubblewrap as soon as it starts (its first
frame is written by the server with the launch), so the sandbox is finished before the
call: bubblewrap has built the namespaces and mounts and this script, inside, imports
what a run needs and waits for its one request. The run's skills then arrive as directory
fds over the inherited ``--skills-fd`` socket (the namespaces tier gets them the same
way); the script copies them into ``/skills``, sets limits and drops privileges.
For the ``degraded`` tier there are no namespaces: the launcher kills every process of
the slot uid after the worker exits.
"""

from __future__ import annotations

import _signal  # the C module: ``signal`` would pull in ``enum`` (~5 ms per run)
import marshal
import os
import resource
import sys

# Linux constants (x86_64 / aarch64 agree on all of these).
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFREG = 0o100000
S_IFLNK = 0o120000
ENOSPC = 28
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SIGKILL = 9
SIGTERM = 15

# Exit codes the server maps to run errors (kept below 128 so they never look like signals).
EXIT_SETUP_FAILED = 90
EXIT_REQUEST_INVALID = 91

_libc = None


def _c():
    """Load libc lazily: ctypes costs a few ms and the degraded tier never needs it."""
    global _libc
    if _libc is None:
        import ctypes

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(ret: int, what: str) -> None:
    if ret != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _prctl(option: int, arg: int) -> None:
    _check(_c().prctl(option, arg, 0, 0, 0), f"prctl({option})")


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None) -> None:
    enc = os.fsencode
    ret = _c().mount(
        enc(src) if src else None,
        enc(dst),
        enc(fstype) if fstype else None,
        flags,
        enc(data) if data else None,
    )
    _check(ret, f"mount {src} -> {dst}")


def _bind(src: str, dst: str, *, writable: bool = False, extra: int = 0) -> None:
    _mount(src, dst, None, MS_BIND | MS_REC, None)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | extra
    if not writable:
        flags |= MS_RDONLY
    _mount(None, dst, None, flags, None)


def _read_request() -> dict:
    """Read ``<length>\\n<marshal>`` from fd 0 without consuming bytes that follow it.

    marshal, not JSON: the request comes from the trusted server, ``marshal`` is built in,
    and ``json`` drags in ``re`` and ``enum``, which would cost more than the isolation.
    """
    header = b""
    while not header.endswith(b"\n"):
        chunk = os.read(0, 1)
        if not chunk and not header:
            raise EOFError
        if not chunk or len(header) > 20:
            raise ValueError("request header missing")
        header += chunk
    size = int(header)
    buf = bytearray()
    while len(buf) < size:
        chunk = os.read(0, size - len(buf))
        if not chunk:
            raise ValueError("request truncated")
        buf += chunk
    req = marshal.loads(bytes(buf))
    if not isinstance(req, dict):
        raise ValueError("request is not a mapping")
    return req


def _devnull_std(fds: tuple[int, ...] = (0, 1, 2)) -> None:
    """Point our copies of the run pipes at /dev/null so EOF depends on the worker only."""
    null = os.open("/dev/null", os.O_RDWR)
    for fd in fds:
        os.dup2(null, fd)
    os.close(null)


def _join_cgroups(fds: list[int]) -> None:
    """Join the slot's cgroups through ``cgroup.procs`` fds the server opened for us."""
    for fd in fds:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 + (-code) if code < 0 else code


def _reap_all() -> None:
    """Reap every remaining child (we are a subreaper, so orphans land here)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _kill_uid(uid: int) -> int:
    """SIGKILL every process whose real uid is ``uid``; return how many were signalled."""
    killed = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            os.kill(int(entry), SIGKILL)
                            killed += 1
                        break
        except (OSError, ValueError):
            continue
    return killed


# ----------------------------------------------------------------------------- worker


def _set_limits(limits: dict) -> None:
    """Per-process rlimits; the slot uid makes RLIMIT_NPROC a per-run process cap."""
    pairs = {
        resource.RLIMIT_CPU: (limits["cpu_s"], limits["cpu_s"] + 1),
        resource.RLIMIT_AS: (limits["address_space_bytes"],) * 2,
        resource.RLIMIT_FSIZE: (limits["file_size_bytes"],) * 2,
        resource.RLIMIT_NPROC: (limits["processes"],) * 2,
        resource.RLIMIT_NOFILE: (limits["open_files"],) * 2,
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_MEMLOCK: (0, 0),
        resource.RLIMIT_MSGQUEUE: (0, 0),
    }
    for which, value in pairs.items():
        resource.setrlimit(which, value)


def _drop_privileges(uid: int, gid: int, *, drop_bounding: bool) -> None:
    if os.geteuid() != 0:
        _prctl(PR_SET_NO_NEW_PRIVS, 1)  # started unprivileged: nothing to drop
        return
    if drop_bounding:
        cap = 0
        while cap < 64:
            if _c().prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                break  # EINVAL: past the last capability this kernel knows
            cap += 1
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getegid() != gid:
        raise OSError("privilege drop did not take effect")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    # setuid() from root marks the process non-dumpable, which makes /proc/self/* root-owned
    # and breaks ordinary introspection; the process now holds only the run's own data.
    _prctl(PR_SET_DUMPABLE, 1)


def _clean_env(req: dict, home: str) -> None:
    os.environ.clear()
    os.environ.update(
        {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TMPDIR": req.get("tmpdir", "/tmp"),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    os.environ.update(req.get("secrets", {}))


def _close_extra_fds() -> None:
    os.closerange(3, 65536)


def _run_worker(req: dict, *, guest_dir: str, workdir: str, drop_bounding: bool) -> None:
    """Become the unprivileged worker and run the job; never returns."""
    code = 1
    try:
        _close_extra_fds()
        _set_limits(req["limits"])
        os.chdir(workdir)
        _drop_privileges(req["uid"], req["gid"], drop_bounding=drop_bounding)
        _clean_env(req, workdir)
        # Last step of the setup, after the privilege drop set no_new_privs and before
        # anything of the run is imported: from here on the kernel refuses the syscalls
        # sandbox escapes are built from (see ``syscall_filter``).
        import syscall_filter

        syscall_filter.install(os.uname().machine, _c())
        sys.path[0] = guest_dir
        import runtime
        import runtime._bootstrap as bootstrap

        runtime.__path__ = [f"{guest_dir}/runtime"]

        code = bootstrap.main(req["job"])
    except BaseException as exc:
        _report_setup_failure(exc)
        code = EXIT_SETUP_FAILED
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _json_string(text: str) -> str:
    ascii_text = text.encode("ascii", "backslashreplace").decode()
    return (
        '"'
        + "".join(
            c if " " <= c <= "~" and c not in '"\\' else f"\\u{ord(c):04x}" for c in ascii_text
        )
        + '"'
    )


def _report_setup_failure(exc: BaseException) -> None:
    """Tell the server why the sandbox could not start (stdout is the control channel)."""
    kind = _json_string(type(exc).__name__)
    line = f'{{"op":"setup_error","type":{kind},"message":{_json_string(str(exc)[:2000])}}}\n'
    try:  # noqa: SIM105 - contextlib would cost an import on every run
        os.write(1, line.encode())
    except OSError:
        pass


# ------------------------------------------------------------------------- namespaces


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _build_root(req: dict, sources: dict[str, int]) -> None:
    """Assemble the sandbox filesystem on a tmpfs and pivot into it (we are pid 1 here)."""
    limits = req["limits"]
    root = req["newroot"]
    uid, gid = req["uid"], req["gid"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    for sub in ("usr", "etc", "dev", "proc", "tmp", "workspace", "skills", "opt/noma"):
        os.makedirs(f"{root}/{sub}", exist_ok=True)
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = f"/{name}"
        if os.path.islink(host):
            os.symlink(os.readlink(host), f"{root}/{name}")
        elif os.path.isdir(host):
            os.mkdir(f"{root}/{name}")
            _bind(host, f"{root}/{name}")
    _bind("/usr", f"{root}/usr")

    # /etc: generated identity files plus the few read-only host files libraries need.
    _write(
        f"{root}/etc/passwd",
        f"root:x:0:0::/root:/bin/false\nsandbox:x:{uid}:{gid}::/workspace:/bin/false\n",
    )
    _write(f"{root}/etc/group", f"root:x:0:\nsandbox:x:{gid}:\n")
    _write(f"{root}/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n")
    _write(f"{root}/etc/hostname", "sandbox\n")
    for name in ("ld.so.cache", "localtime"):
        if os.path.isfile(f"/etc/{name}"):
            with open(f"/etc/{name}", "rb") as src, open(f"{root}/etc/{name}", "wb") as dst:
                dst.write(src.read())
    for name in ("alternatives", "python3.11"):
        if os.path.isdir(f"/etc/{name}"):
            os.mkdir(f"{root}/etc/{name}")
            _bind(f"/etc/{name}", f"{root}/etc/{name}")

    # /dev: only the harmless character devices.
    for name in ("null", "zero", "full", "random", "urandom"):
        _write(f"{root}/dev/{name}", "")
        _bind(f"/dev/{name}", f"{root}/dev/{name}", writable=True, extra=MS_NOEXEC)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    os.mkdir(f"{root}/dev/shm")
    small = limits["tmp_bytes"]
    _mount(
        "tmpfs",
        f"{root}/dev/shm",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"size={small},nr_inodes=1024,mode=1777",
    )
    _mount(
        "tmpfs",
        f"{root}/tmp",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"size={small},nr_inodes=4096,mode=1777",
    )
    _mount(
        "tmpfs",
        f"{root}/workspace",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"size={limits['workspace_bytes']},nr_inodes=16384,mode=0700,uid={uid},gid={gid}",
    )
    _mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)

    _stage_skills(req, f"{root}/skills", sources, mount=True)
    _bind(req["guest_dir"], f"{root}/opt/noma", extra=MS_NODEV)

    _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    _pivot(root)


def _stage_skills(req: dict, dest: str, sources: dict[str, int], *, mount: bool) -> None:
    """Copy each skill (an open directory fd) into the size-capped ``dest`` tmpfs, then
    make it read-only; the fds are closed here.

    Why copies and not bind mounts: a bind mount's source path shows in the run's
    ``/proc/self/mountinfo``, and a skill's source is a path in the user's workspace.
    The copy follows no symlink inside a skill (links are copied as links, resolving
    inside the sandbox), skips fifos, sockets and devices, and keeps each file's mode and
    owner, so a file the slot uid could not read in place it cannot read here either.
    ``dest`` bounds the size (``skills_bytes``) and the file count; a skill too big for it
    fails the run's setup. With ``mount`` the tmpfs is mounted here (the namespaces tier);
    bubblewrap mounts it itself.
    """
    limits = req["limits"]
    if mount:
        _mount(
            "tmpfs",
            dest,
            "tmpfs",
            MS_NOSUID | MS_NODEV,
            f"size={limits['skills_bytes']},nr_inodes=16384,mode=0755",
        )
    try:
        for name, src in sources.items():
            st = os.fstat(src)
            if st.st_mode & S_IFMT != S_IFDIR or "/" in name or name in ("", ".", ".."):
                raise ValueError(f"skill {name!r} is not a directory")
            os.mkdir(f"{dest}/{name}", 0o700)
            try:
                _copy_tree(src, f"{dest}/{name}")
            except OSError as exc:
                if exc.errno == ENOSPC:
                    raise OSError(
                        ENOSPC,
                        f"the skills of this run are larger than the sandbox's "
                        f"{limits['skills_bytes']} byte skills area",
                    ) from None
                raise
            os.chown(f"{dest}/{name}", st.st_uid, st.st_gid)
            os.chmod(f"{dest}/{name}", st.st_mode & 0o7777)
    finally:
        for src in sources.values():
            os.close(src)
    _mount(None, dest, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


def _receive_skill_dirs(channel: int, names: list) -> dict[str, int]:
    """The skill directories of this run, as fds the server sends over ``channel``.

    A pre-started bubblewrap sandbox was built before the run's skills were known, so
    they arrive at call time: one ``SCM_RIGHTS`` message with one directory fd per name,
    in the request's order. Anything else (too few or too many fds, a truncated message)
    fails the setup, and every fd received is closed.
    """
    import socket

    if not names:
        return {}
    sock = socket.socket(fileno=channel)
    try:
        msg, fds, flags, _ = socket.recv_fds(sock, 16, len(names) + 1)
    finally:
        sock.detach()
    if flags & socket.MSG_CTRUNC or len(fds) != len(names) or msg != b"S":
        for fd in fds:
            os.close(fd)
        raise ValueError(f"expected {len(names)} skill directories, got {len(fds)}")
    return dict(zip(names, fds, strict=True))


def _copy_tree(src: int, dest: str) -> None:
    """Copy the directory open at ``src`` into the existing directory ``dest``."""
    with os.scandir(src) as it:
        names = [entry.name for entry in it]
    for name in names:
        st = os.stat(name, dir_fd=src, follow_symlinks=False)
        kind = st.st_mode & S_IFMT
        target = f"{dest}/{name}"
        if kind == S_IFLNK:
            os.symlink(os.readlink(name, dir_fd=src), target)
            os.lchown(target, st.st_uid, st.st_gid)
            continue
        if kind == S_IFDIR:
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=src)
            try:
                os.mkdir(target, 0o700)
                _copy_tree(sub, target)
            finally:
                os.close(sub)
        elif kind == S_IFREG:
            _copy_file(src, name, target)
        else:
            continue  # fifo, socket, device: nothing a skill needs, and unsafe to open
        os.chown(target, st.st_uid, st.st_gid)
        os.chmod(target, st.st_mode & 0o7777)


def _copy_file(src_dir: int, name: str, target: str) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_dir)
    try:
        size = os.fstat(fd).st_size
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            offset = 0
            while offset < size:
                sent = os.sendfile(out, fd, offset, size - offset)
                if sent == 0:
                    break  # the file shrank while we copied it
                offset += sent
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _pivot(root: str) -> None:
    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        os.chroot(".")  # unknown arch: chroot; the worker holds no CAP_SYS_CHROOT to escape
    else:
        _check(_c().syscall(number, b".", b"."), "pivot_root")
        _check(_c().umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def _init_loop(worker: int) -> int:
    """Pid 1 duties: reap everything, exit with the worker's status when it ends."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 1
        except InterruptedError:
            continue
        if pid == worker:
            return _exit_code(status)


def _namespaces_main(req: dict, channel: int | None) -> int:
    _c()
    if channel is None:
        raise ValueError("no skills channel")
    sources = _receive_skill_dirs(channel, req.get("skill_names", []))
    os.close(channel)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # A cgroup namespace rooted at the slot's cgroups (joined while warming up), so
    # /proc/self/cgroup shows "/" rather than the host's cgroup layout.
    flags = (
        CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
    )
    _check(_c().unshare(flags), "unshare")
    init = os.fork()
    if init == 0:
        code = EXIT_SETUP_FAILED
        try:
            _prctl(PR_SET_PDEATHSIG, SIGKILL)
            _build_root(req, sources)
            _close_extra_fds()  # nothing that points outside the new root stays open
            worker = os.fork()
            if worker == 0:
                _run_worker(req, guest_dir="/opt/noma", workdir="/workspace", drop_bounding=True)
            _devnull_std()
            code = _init_loop(worker)
        except BaseException as exc:
            _report_setup_failure(exc)
        os._exit(code)
    for fd in sources.values():
        os.close(fd)  # init holds its own copies; the launcher keeps no way out
    return _supervise(init, uid=None)


def _supervise(child: int, *, uid: int | None) -> int:
    """Wait for the child; on SIGTERM kill it first so nothing is orphaned, then reap all."""

    def on_term(signum: int, frame: object) -> None:
        try:  # noqa: SIM105 - contextlib would cost an import on every run
            os.kill(child, SIGKILL)
        except ProcessLookupError:
            pass
        if uid is not None:
            _kill_uid(uid)

    _signal.signal(SIGTERM, on_term)
    _devnull_std()
    code = 1
    while True:
        try:
            _, status = os.waitpid(child, 0)
            code = _exit_code(status)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    if uid is not None:
        # No pid namespace: daemons that double-forked survive the worker; end them all.
        for _ in range(50):
            if _kill_uid(uid) == 0:
                break
            _reap_nohang()
    _reap_all()
    return code


def _reap_nohang() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _degraded_main(req: dict) -> int:
    """No namespaces available: plain process, rlimits and the slot uid only."""
    _c()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    worker = os.fork()
    if worker == 0:
        _prctl(PR_SET_PDEATHSIG, SIGKILL)
        _run_worker(req, guest_dir=req["guest_dir"], workdir=req["workdir"], drop_bounding=True)
    return _supervise(worker, uid=req["uid"] if req.get("kill_uid") else None)


def _bubblewrap_main(req: dict, channel: int | None) -> int:
    """Inside bubblewrap (pid 2 under bwrap's init): skills, limits, ownership, privilege drop.

    This process was started ahead of the call (see ``sandbox/warm.py``) and has waited,
    as root inside the finished sandbox, for its one request; the skills come now.
    """
    _c()
    if channel is None:
        raise ValueError("no skills channel")
    _stage_skills(
        req, "/skills", _receive_skill_dirs(channel, req.get("skill_names", [])), mount=False
    )
    os.close(channel)
    os.chown("/workspace", req["uid"], req["gid"])
    os.chmod("/workspace", 0o700)
    _run_worker(req, guest_dir="/opt/noma", workdir="/workspace", drop_bounding=True)
    return EXIT_SETUP_FAILED  # not reached


def _preload(channel: int | None) -> None:
    """Load what every run needs before the request arrives.

    The server keeps one launcher per idle slot, blocked on its request; whatever is
    imported here is off the run's critical path. The modules stay loaded across the
    pivot into the sandbox root, where the worker uses them as they are.
    """
    _c()
    import runtime._bootstrap  # noqa: F401
    import syscall_filter  # noqa: F401

    if channel is not None:
        import socket  # noqa: F401  (the skills channel of a pre-started bubblewrap sandbox)


def _parse_argv(argv: list[str]) -> tuple[int | None, list[int], bool, int | None]:
    """``[--parent PID] [--cgroup-fd FD]... [--exec-only] [--skills-fd FD]``."""
    parent: int | None = None
    cgroups: list[int] = []
    exec_only = False
    skills_fd: int | None = None
    it = iter(argv)
    for arg in it:
        if arg == "--parent":
            parent = int(next(it))
        elif arg == "--cgroup-fd":
            cgroups.append(int(next(it)))
        elif arg == "--exec-only":
            exec_only = True
        elif arg == "--skills-fd":
            skills_fd = int(next(it))
            if skills_fd < 3:
                raise ValueError("the skills fd must not be a standard stream")
        else:
            raise ValueError(f"unknown launcher argument {arg!r}")
    return parent, cgroups, exec_only, skills_fd


def _close_extra_fds_but(keep: int | None) -> None:
    if keep is None:
        _close_extra_fds()
    else:
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)


def _exec_bwrap(argv: list[str]) -> None:
    """Become bwrap with its arguments read from a memfd (``--args``), not the command line.

    bwrap is pid 1 of the sandbox and its command line names host paths (the guest
    directory, skill directories, scratch files); every process in the sandbox can read
    ``/proc/1/cmdline``. Passed through an fd, that line is ``bwrap --args N -- <python>
    -I -S /opt/noma/launcher.py``.
    """
    split = argv.index("--")  # options go through the fd; the command (in-sandbox paths) may not
    fd = os.memfd_create("bwrap-args", 0)
    data = b"".join(os.fsencode(a) + b"\0" for a in argv[1:split])
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, 0)
    os.execv(argv[0], [argv[0], "--args", str(fd), *argv[split:]])


def main() -> int:
    """Warm up (death signal, cgroups, imports), wait for the request, run the tier."""
    try:
        parent, cgroups, exec_only, skills_fd = _parse_argv(sys.argv[1:])
        if parent is not None:
            _c()
            _prctl(PR_SET_PDEATHSIG, SIGTERM)
            if os.getppid() != parent:
                return EXIT_SETUP_FAILED  # the server died before we armed the death signal
        _join_cgroups(cgroups)
        if not exec_only:
            _preload(skills_fd)
        # The guest directory's fd (this script's path runs through it) is not needed
        # once everything is imported, and must not reach the run. The skills channel
        # stays (bubblewrap passes it on to the launcher inside, which closes it).
        _close_extra_fds_but(skills_fd)
        req = _read_request()
    except EOFError:
        return 0  # a warm launcher the server no longer needs
    except (ValueError, OSError) as exc:
        _report_setup_failure(exc)
        return EXIT_REQUEST_INVALID
    tier = req.get("tier")
    try:
        if tier == "exec":
            # Outer half of the bubblewrap tier: become bwrap, in this slot's cgroups. The
            # inner launcher reads its own request frame from the same stdin.
            _exec_bwrap(req["argv"])
        if tier == "bubblewrap":
            return _bubblewrap_main(req, skills_fd)
        if tier == "namespaces":
            return _namespaces_main(req, skills_fd)
        if tier == "degraded":
            return _degraded_main(req)
    except BaseException as exc:
        _report_setup_failure(exc)
        return EXIT_SETUP_FAILED
    _report_setup_failure(ValueError(f"unknown tier {tier!r}"))
    return EXIT_REQUEST_INVALID
