"""Run jobs in fresh sandboxes: one launcher process per run, slots, limits, cleanup.

The server side of a run is two readers and a writer on the launcher's pipes (request
and replies on stdin, control records on stdout, logs on stderr) under one wall clock.
Whatever happens inside — a timeout, a flood of output, a crash, an OOM kill — the run's
processes are killed, the slot's uid is left without processes, and the run's cgroups
and scratch files are removed before the slot is used again.

The caller gets its ``Outcome`` as soon as the run's result is known; the kernel's share
of the teardown (reaping, unmounting, freeing namespaces, ~5-10 ms) finishes in the
background while the slot stays reserved, and ``close()`` waits for all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import marshal
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sandbox import procs
from sandbox.bridge import BlobBridge, BlobQuotaError
from sandbox.cgroups import CgroupRoot, RunCgroup
from sandbox.config import SandboxConfig, TierName
from sandbox.control import ControlHandler, ProtocolViolation, RunState
from sandbox.job import Job, Outcome, RunError
from sandbox.logs import LogCollector
from sandbox.outcome import build_outcome
from sandbox.skill_dirs import UnsafeSkillPath, open_skill_dirs
from sandbox.slots import SlotsUnavailable, UidSlots
from sandbox.tiers import TierUnavailable, bubblewrap_args, choose_tiers
from sandbox.warm import Launcher, LaunchSpec, Process, WarmLaunchers

log = logging.getLogger("noma.sandbox")
GUEST_DIR = Path(__file__).resolve().parent / "guest"
LAUNCHER = GUEST_DIR / "launcher.py"
KILL_GRACE_S = 5.0
AFTER_RESULT_GRACE_S = 0.25
PROBE_CODE = "def main(args):\n    return 1\n"
QUOTA_ERROR = "BlobQuotaExceeded"


class SandboxUnavailable(RuntimeError):
    """No isolation tier can run here (and a degraded one was not allowed)."""


@dataclass
class SandboxStats:
    active: int = 0
    peak_active: int = 0
    waiting: int = 0
    runs: int = 0


class Sandbox:
    """A pool of run slots on one isolation tier. ``start()`` before use, ``close()`` after."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig.from_env()
        self.tier: TierName | None = None
        self.unavailable_reason: str | None = "sandbox not started"
        self.stats = SandboxStats()
        self._slots: UidSlots | None = None
        self._cgroups: CgroupRoot | None = None
        self._slot_groups: dict[int, RunCgroup] = {}
        self._scratch: Path | None = None
        self._guest: Path = GUEST_DIR
        self._warm: WarmLaunchers | None = None
        self._live: dict[int, Process] = {}
        self._teardowns: set[asyncio.Task[None]] = set()
        self._closing = False

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Reserve uids, set up cgroups, then pick the strongest tier whose probe run passes.

        Never raises for a missing capability: ``unavailable_reason`` says why, and every
        run then fails closed with ``IsolationUnavailable``.
        """
        cfg = self.config
        self._scratch = Path(tempfile.mkdtemp(prefix="noma-sandbox-"))
        self._scratch.chmod(0o711)
        (self._scratch / "root").mkdir()
        # Runs see the guest code through a copy in the scratch dir: a bind mount's source
        # shows in the run's /proc/self/mountinfo, and the checkout's path must not.
        try:
            await asyncio.to_thread(_stage_guest, self._scratch / "guest", cfg.python)
        except OSError as exc:
            self.unavailable_reason = f"could not stage the guest code: {exc}"
            return
        self._guest = self._scratch / "guest"
        is_root = os.geteuid() == 0
        try:
            if is_root:
                self._slots = UidSlots(
                    base=cfg.uid_base, span=cfg.uid_range, count=cfg.slots, lock_dir=cfg.lock_dir
                )
                for uid in self._slots.reserve():
                    procs.kill_all(procs.pids_of_uid(uid))  # leftovers of a crashed server
                self._cgroups = CgroupRoot.create()
                if self._cgroups is not None:
                    for uid in self._slots.uids:
                        self._slot_groups[uid] = self._cgroups.new_group(
                            f"slot-{uid}",
                            memory_bytes=cfg.limits.memory_bytes,
                            # + launcher, pid 1 and the worker itself
                            processes=cfg.limits.processes + 3,
                        )
            else:
                self._slots = _SameUidSlots(os.getuid(), cfg.slots)
        except (SlotsUnavailable, OSError) as exc:
            self.unavailable_reason = f"no sandbox slots: {exc}"
            return
        reasons: list[str] = []
        for tier in choose_tiers(cfg, is_root=is_root):
            if tier == "degraded" and not cfg.allow_degraded:
                reasons.append(
                    "degraded (no network isolation) is refused unless "
                    "NOMA_SANDBOX_ALLOW_DEGRADED=1"
                )
                break
            self.tier = tier
            self.unavailable_reason = None
            self._warm = WarmLaunchers(self._launcher_argv)
            for uid in self._slots.uids:
                self._warm.prepare(uid)
            probe = await self.run(Job(mode="code", code=PROBE_CODE), None)
            if probe.status == "completed" and probe.output == 1:
                return
            reasons.append(f"{tier}: {probe.error.message if probe.error else 'no result'}")
            await self._drain_teardowns()
            if self._warm is not None:
                await self._warm.close()
                self._warm = None
        self.tier = None
        self.unavailable_reason = "no sandbox tier works on this host: " + "; ".join(reasons)

    async def close(self) -> None:
        """Kill runs still going, wait for their teardown, remove every trace of the pool."""
        self._closing = True
        for proc in list(self._live.values()):
            procs.kill_children(proc.pid)
        await self._drain_teardowns()
        if self._warm is not None:
            await self._warm.close()
            self._warm = None
        if self._cgroups is not None:
            await asyncio.to_thread(self._cgroups.remove)
            self._cgroups = None
        if self._slots is not None:
            self._slots.release_all()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    async def _drain_teardowns(self) -> None:
        while self._teardowns:
            await asyncio.gather(*list(self._teardowns), return_exceptions=True)

    async def idle(self) -> None:
        """Wait until no run is active, every teardown has finished and each idle slot's
        next launcher has started (a teardown asks for it last)."""
        while self.stats.active or self._teardowns:
            await self._drain_teardowns()
            await asyncio.sleep(0.005)
        if self._warm is not None:
            await self._warm.started()

    def describe(self) -> dict[str, Any]:
        return {
            "tier": self.tier if self.unavailable_reason is None else None,
            "unavailable_reason": self.unavailable_reason,
            "slots": self.config.slots,
            "cgroups": self._cgroups is not None,
            "uids": list(self._slots.uids) if self._slots is not None else [],
            "active": self.stats.active,
            "peak_active": self.stats.peak_active,
            "waiting": self.stats.waiting,
            "runs": self.stats.runs,
        }

    def _launcher_argv(self, uid: int) -> LaunchSpec:
        """The launcher's command line and the fds it inherits (each opened for it alone).

        No host path is on the command line: a run reads its own ``/proc/self/cmdline``
        (and, on the namespaces tier, pid 1's), which are this list. The launcher script
        is reached through an inherited descriptor of the guest directory and the slot's
        cgroups are joined through inherited descriptors of their ``cgroup.procs`` files.

        On the bubblewrap tier the launcher execs bubblewrap at once (its first frame is
        written now), so the whole sandbox is built before the call; it also inherits one
        end of a socket pair, the channel its run's skills arrive on (``_send_skills``).
        """
        fds: list[int] = []
        channel: socket.socket | None = None
        try:
            guest = os.open(self._guest, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            fds.append(guest)
            argv = [
                self.config.python,
                "-I",
                "-S",
                f"/proc/self/fd/{guest}/{LAUNCHER.name}",
                "--parent",
                str(os.getpid()),
            ]
            group = self._slot_groups.get(uid)
            for procs_file in group.procs_files if group is not None else []:
                fd = os.open(procs_file, os.O_WRONLY | os.O_CLOEXEC)
                fds.append(fd)
                argv += ["--cgroup-fd", str(fd)]
            preamble = b""
            if self.tier in ("bubblewrap", "namespaces"):
                channel, inner = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                fds.append(inner.detach())
                argv += ["--skills-fd", str(fds[-1])]
            if self.tier == "bubblewrap":
                assert self._scratch is not None
                argv.append("--exec-only")
                bwrap = bubblewrap_args(self.config, self._guest, self._scratch, uid, fds[-1])
                preamble = _encode_frames([{"tier": "exec", "argv": bwrap}])
        except (OSError, TierUnavailable):
            for fd in fds:
                os.close(fd)
            if channel is not None:
                channel.close()
            raise
        return LaunchSpec(argv, fds, preamble, channel)

    # ------------------------------------------------------------------------ run

    async def run(self, job: Job, bridge: BlobBridge | None) -> Outcome:
        """Run ``job`` in a fresh sandbox; every failure comes back as a failed ``Outcome``."""
        tier = self.tier
        limits = self.config.limits

        def refuse(kind: str, message: str) -> Outcome:
            return Outcome(
                status="failed",
                isolation=tier or "none",
                duration_ms=0,
                error=RunError(kind, message),
            )

        if tier is None or self._slots is None or self.unavailable_reason is not None:
            return refuse("IsolationUnavailable", self.unavailable_reason or "sandbox not started")
        if self._closing:
            return refuse("RuntimeShuttingDown", "the skills runtime is shutting down")
        if tier == "degraded" and job.secrets:
            return refuse(
                "IsolationUnavailable",
                "this host only offers degraded isolation (no namespaces), so runs that carry "
                "secrets are refused",
            )
        if self.stats.waiting >= self.config.max_pending:
            return refuse("RuntimeBusy", "too many runs are waiting for a sandbox; retry later")
        timeout = min(job.timeout_s or limits.timeout_s, limits.max_timeout_s)

        self.stats.waiting += 1
        try:
            uid = await self._slots.acquire()
        finally:
            self.stats.waiting -= 1
        started = time.monotonic()
        self.stats.active += 1
        self.stats.peak_active = max(self.stats.peak_active, self.stats.active)
        outcome = await self._run_in_slot(job, bridge, tier, uid, timeout)
        return replace(outcome, duration_ms=int((time.monotonic() - started) * 1000))

    async def _run_in_slot(
        self, job: Job, bridge: BlobBridge | None, tier: TierName, uid: int, timeout: float
    ) -> Outcome:
        """Owns the slot from here on: every path ends in ``_teardown``, which frees it."""
        limits = self.config.limits
        cgroup = self._slot_groups.get(uid)
        ooms_before = cgroup.oom_kills() if cgroup is not None else 0
        run_dir: Path | None = None
        skill_fds: list[int] = []
        try:
            skill_fds = open_skill_dirs(job.mounts)
            frames, run_dir = self._prepare(job, tier, uid, timeout, skill_fds)
            payload = _encode_frames(frames)
            assert self._warm is not None
            launcher = await self._warm.take(uid)
            _send_skills(launcher, skill_fds)
            proc = launcher.proc
        except UnsafeSkillPath as exc:
            self._schedule(self._teardown(None, None, cgroup, run_dir, uid))
            return Outcome(
                status="failed",
                isolation=tier,
                duration_ms=0,
                error=RunError("UnsafeSkillPath", str(exc)),
            )
        except (ValueError, RecursionError) as exc:
            self._schedule(self._teardown(None, None, cgroup, run_dir, uid))
            return Outcome(
                status="failed",
                isolation=tier,
                duration_ms=0,
                error=RunError("InvalidArgs", f"the run's args cannot be passed in: {exc}"),
            )
        except (OSError, TierUnavailable) as exc:
            self._schedule(self._teardown(None, None, cgroup, run_dir, uid))
            return Outcome(
                status="failed",
                isolation=tier,
                duration_ms=0,
                error=RunError("SandboxError", f"could not start the sandbox: {exc}"),
            )
        finally:
            for fd in skill_fds:
                os.close(fd)
        self._live[proc.pid] = proc
        state = RunState(readable=set(job.input_blobs))
        logs = LogCollector(limits.logs_preview_bytes)
        io_task = asyncio.ensure_future(self._pump(proc, payload, bridge, state, logs))
        try:
            await self._await_end(proc, io_task, state, timeout)
        except asyncio.CancelledError:
            self._stop(proc, state, "Cancelled", "the request was cancelled")
            self._schedule(self._teardown(proc, io_task, cgroup, run_dir, uid))
            raise
        oom = 0
        if cgroup is not None and state.result is None:
            oom = cgroup.oom_kills() - ooms_before
        outcome = build_outcome(
            tier=tier,
            state=state,
            logs_preview=logs.preview(),
            returncode=proc.returncode,
            oom_kills=oom,
            limits=limits,
        )
        outcome = _scrub_outcome(outcome, self._host_paths(job, run_dir))
        if state.kill_reason is not None and state.kill_reason.type == QUOTA_ERROR:
            # Nothing partial is kept: the blobs this run committed before it hit the quota
            # go too, so the store and its accounting are as they were before the run.
            if bridge is not None and state.output_blobs:
                await asyncio.to_thread(_discard, bridge, list(state.output_blobs))
            state.output_blobs.clear()
            outcome = replace(outcome, output_blobs=())
        self._schedule(self._teardown(proc, io_task, cgroup, run_dir, uid, state))
        return outcome

    async def _await_end(
        self, proc: Process, io_task: asyncio.Future[None], state: RunState, timeout: float
    ) -> None:
        """Return once the result is in, or the run ended without one, or time ran out."""

        async def ended() -> None:
            await asyncio.shield(io_task)
            await proc.wait()

        end = asyncio.ensure_future(ended())
        got_result = asyncio.ensure_future(state.got_result.wait())
        try:
            done, _ = await asyncio.wait(
                {end, got_result}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                self._stop(
                    proc,
                    state,
                    "TimeoutError",
                    f"the run exceeded its {timeout:g} s wall-clock timeout; all of its processes "
                    "were killed",
                )
            elif got_result in done and end not in done:
                # The logs written before the result are in the pipe: wait for the worker to
                # exit (EOF) so the preview is complete, but not for lingering children.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(io_task), AFTER_RESULT_GRACE_S)
            if state.result is None and state.kill_reason is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(end), KILL_GRACE_S)
        finally:
            for task in (end, got_result):
                if not task.done():
                    task.cancel()

    def _stop(self, proc: Process, state: RunState, kind: str, message: str) -> None:
        if state.kill_reason is None and state.result is None:
            state.kill_reason = RunError(kind, message)
        procs.kill_children(proc.pid)

    async def _pump(
        self,
        proc: Process,
        payload: bytes,
        bridge: BlobBridge | None,
        state: RunState,
        logs: LogCollector,
    ) -> None:
        """Feed the request, then serve the control channel and collect logs until EOF."""
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdout, stderr = proc.stdout, proc.stderr
        limits = self.config.limits
        handler = ControlHandler(state, bridge, limits, proc.stdin)

        async def read_logs() -> None:
            while chunk := await stderr.read(65536):
                logs.add(chunk)
                if logs.total > limits.max_log_bytes and state.kill_reason is None:
                    self._stop(
                        proc,
                        state,
                        "LogLimitExceeded",
                        f"the run printed more than {limits.max_log_bytes} bytes to stdout/stderr "
                        "and was stopped. Write large data with runtime.blobs.write_text(...) "
                        "and return the blob id instead of printing it.",
                    )

        async def read_control() -> None:
            import json

            while True:
                try:
                    line = await stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    self._stop(
                        proc,
                        state,
                        "SandboxProtocolError",
                        "a control record exceeded the size limit",
                    )
                    while await stdout.read(65536):
                        pass
                    return
                if not line:
                    return
                try:
                    await handler.handle(json.loads(line))
                except (ValueError, ProtocolViolation) as exc:
                    self._stop(
                        proc, state, "SandboxProtocolError", f"malformed control record: {exc}"
                    )
                except BlobQuotaError as exc:
                    state.abort_pending_blob()
                    self._stop(proc, state, QUOTA_ERROR, f"{exc} The run was stopped.")
                except Exception as exc:  # e.g. the blob store's disk is full
                    log.exception("serving a sandbox control record failed")
                    self._stop(
                        proc,
                        state,
                        "SandboxError",
                        f"the server could not serve the run's request: {exc}",
                    )

        try:
            proc.stdin.write(payload)
            await proc.stdin.drain()
        except (ConnectionError, RuntimeError):
            pass  # the launcher died; the readers see EOF and the outcome says so
        await asyncio.gather(read_logs(), read_control())

    def _schedule(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._teardowns.add(task)
        task.add_done_callback(self._teardowns.discard)

    async def _teardown(
        self,
        proc: Process | None,
        io_task: asyncio.Future[None] | None,
        cgroup: RunCgroup | None,
        run_dir: Path | None,
        uid: int,
        state: RunState | None = None,
    ) -> None:
        """End every process of the run, reap, remove its cgroup and files, free the slot."""
        try:
            if proc is not None:
                if proc.returncode is None and state is not None and state.result is not None:
                    procs.kill_children(proc.pid)  # result is in; stragglers need not finish
                try:
                    await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
                except TimeoutError:
                    procs.kill_children(proc.pid)
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
            if io_task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(io_task, KILL_GRACE_S)
            if state is not None:
                state.abort_pending_blob()
            await asyncio.to_thread(self._cleanup, cgroup, run_dir, uid, proc is not None)
        finally:
            if proc is not None:
                self._live.pop(proc.pid, None)
            self.stats.active -= 1
            self.stats.runs += 1
            assert self._slots is not None
            if self._warm is not None:
                self._warm.prepare(uid)
            self._slots.release(uid)

    def _cleanup(
        self, cgroup: RunCgroup | None, run_dir: Path | None, uid: int, started: bool
    ) -> None:
        """Leave nothing behind: processes of the slot uid, the cgroup, scratch files.

        With a pid namespace every process of the run is gone once the launcher exits, and
        the cgroup lists anything that is not; only without both is the /proc scan by uid
        needed. A run refused before its launcher was taken (``started`` false) has no
        process: the only one in its slot is the launcher waiting for the slot's next
        run, which must live.
        """
        if started and uid != os.getuid() and (cgroup is None or self.tier == "degraded"):
            for _ in range(20):
                if procs.kill_all(procs.pids_of_uid(uid)) == 0:
                    break
                time.sleep(0.005)
        if started and cgroup is not None:
            for _ in range(20):
                if cgroup.kill_all() == 0:
                    break
                time.sleep(0.005)
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)

    def _host_paths(self, job: Job, run_dir: Path | None) -> list[tuple[str, str]]:
        """Host paths a trace or log may show, each with the path the run saw instead."""
        pairs: list[tuple[str, str]] = []
        if run_dir is not None:
            pairs += [
                (str(run_dir / "skills"), "/skills"),
                (str(run_dir / "guest"), "/opt/noma"),
                (str(run_dir / "workspace"), "/workspace"),
            ]
        for m in job.mounts:
            pairs.append((str(m.path), f"/skills/{m.name}"))
        pairs.append((str(GUEST_DIR), "/opt/noma"))
        pairs.append((str(self._guest), "/opt/noma"))
        if self._scratch is not None:
            pairs.append((str(self._scratch), "/sandbox"))
        # Longest first, so a path inside another is replaced whole.
        return sorted(pairs, key=lambda p: len(p[0]), reverse=True)

    # ---------------------------------------------------------------- preparation

    def _prepare(
        self, job: Job, tier: TierName, uid: int, timeout: float, skill_fds: list[int]
    ) -> tuple[list[dict[str, Any]], Path | None]:
        """The request frames for the launcher, and the run's scratch dir if it has one.

        ``skill_fds`` are the job's skill folders, opened without following symlinks
        (``skill_dirs``): the sandboxed tiers receive them over the launcher's skills
        channel and copy from them; the degraded tier's copy is made here, from them.
        """
        cfg = self.config
        assert self._scratch is not None
        run_dir: Path | None = None
        skill_dirs = {m.name: f"/skills/{m.name}" for m in job.mounts}
        request: dict[str, Any] = {
            "tier": tier,
            "uid": uid,
            "gid": uid,
            "limits": cfg.limits.for_launcher(timeout),
            "secrets": dict(job.secrets),
        }
        if tier == "namespaces":
            request["newroot"] = str(self._scratch / "root")
            request["guest_dir"] = str(self._guest)
        elif tier == "degraded":
            run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=self._scratch))
            run_dir.chmod(0o711)
            workspace = run_dir / "workspace"
            workspace.mkdir(mode=0o700)
            if os.geteuid() == 0:
                os.chown(workspace, uid, uid)
            shutil.copytree(self._guest, run_dir / "guest")
            for m, fd in zip(job.mounts, skill_fds, strict=True):
                dest = run_dir / "skills" / m.name
                shutil.copytree(f"/proc/self/fd/{fd}", dest, symlinks=True, ignore=_special_files)
                skill_dirs[m.name] = str(dest)
            request["workdir"] = str(workspace)
            request["guest_dir"] = str(run_dir / "guest")
            request["tmpdir"] = str(workspace)
            request["kill_uid"] = uid != os.getuid()
        request["job"] = {
            "mode": job.mode,
            "target": job.target,
            "export": job.export,
            "code": job.code,
            "entrypoint": job.entrypoint,
            "args": dict(job.args),
            "skills": {
                m.name: {"dir": skill_dirs[m.name], "entrypoint": m.entrypoint} for m in job.mounts
            },
            "max_output_bytes": cfg.limits.max_output_bytes,
        }
        if tier in ("bubblewrap", "namespaces"):
            request["skill_names"] = [m.name for m in job.mounts]
        return [request], run_dir


def _scrub(text: str, pairs: list[tuple[str, str]]) -> str:
    for host, inside in pairs:
        if host and host in text:
            text = text.replace(host, inside)
    return text


def _scrub_outcome(outcome: Outcome, pairs: list[tuple[str, str]]) -> Outcome:
    """In-band traces and logs show sandbox paths only, never where things sit on the host."""
    error = outcome.error
    if error is not None:
        error = RunError(error.type, _scrub(error.message, pairs))
    return replace(outcome, error=error, logs_preview=_scrub(outcome.logs_preview, pairs))


def _send_skills(launcher: Launcher, fds: list[int]) -> None:
    """Hand the run's skill directories to its sandbox (one ``SCM_RIGHTS`` message), then
    close the server's end of the channel: a sandbox serves one run."""
    channel = launcher.channel
    launcher.channel = None
    if channel is None:
        return
    with channel:
        if fds:
            # If the launcher died, its run fails with the setup error it reports.
            with contextlib.suppress(OSError):
                socket.send_fds(channel, [b"S"], fds)


def _special_files(directory: str, names: list[str]) -> list[str]:
    """Fifos, sockets and devices in a skill folder: never opened, never copied."""
    skipped = []
    for name in names:
        mode = os.lstat(os.path.join(directory, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skipped.append(name)
    return skipped


def _discard(bridge: BlobBridge, blob_ids: list[str]) -> None:
    for blob_id in blob_ids:
        try:
            bridge.delete(blob_id)
        except (KeyError, LookupError, OSError):
            log.warning("could not remove blob %s of a run stopped by the quota", blob_id)


def _encode_frames(frames: list[dict[str, Any]]) -> bytes:
    """``<length>\\n<marshal>`` per frame; raises ValueError for unencodable args."""
    data = b""
    for frame in frames:
        body = marshal.dumps(frame)
        data += f"{len(body)}\n".encode() + body
    return data


def _stage_guest(dest: Path, python: str) -> None:
    """Copy the guest code to ``dest`` and write its bytecode once with the sandbox interpreter.

    Runs import the guest modules as the slot uid from a read-only mount, so they could
    never write ``__pycache__`` themselves and would recompile on every run.
    """
    shutil.copytree(GUEST_DIR, dest, ignore=shutil.ignore_patterns("__pycache__"))
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [python, "-I", "-m", "compileall", "-q", str(dest)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )


class _SameUidSlots(UidSlots):
    """Without root there is no uid to drop to: slots only bound concurrency."""

    def __init__(self, uid: int, count: int) -> None:
        super().__init__(base=uid, span=1, count=count, lock_dir=Path("/nonexistent"))
        self.uids = [uid] * count
        self._free = asyncio.Queue()
        for u in self.uids:
            self._free.put_nowait(u)

    def release_all(self) -> None:
        self.uids = []
