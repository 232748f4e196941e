"""Blobs: content files named by random ids, with a small JSON sidecar for kind and size.

The id is ``blob:`` + 32 random hex digits and is checked against that exact shape before
any path is built from it, so a blob id can never name a file outside the store. Writes
are atomic (temp file, fsync, rename); the sidecar is written last and is the commit
point, so a crash leaves either no blob or a whole one.

Nothing is left unowned by a crash (issue 29). A pending write's temp file (``.pending-*``)
is held under an exclusive ``flock`` for as long as its writer lives; a blob written by a
run names that run as its owner, and the run holds a journal file (``.runs/<run_id>``)
under ``flock`` until it completes. Opening the store (and ``noma skills blobs gc``) sweeps
what a dead process left: temp files nobody holds, the blobs of runs whose journal nobody
holds (a run that never completed: no record names them), content files without a sidecar
and sidecars without content; then the quota ledger is rebuilt from what is on disk. A blob
made by ``create_blob`` is owned by its caller and only an explicit delete removes it.

A workspace-wide quota caps the bytes all blobs and created skills may hold together
(default 1 GiB, ``[skills] blob_quota_bytes`` in ``noma-workbench.toml`` or
``NOMA_BLOB_QUOTA_BYTES``), on top of the sandbox's per-run limits. Bytes are reserved in
the shared ledger under the lock *before* they are written, so concurrent creates, in
this process or any other on the same folder, can never together pass the cap; a refused
write reserves nothing and leaves no file (issue 24: two processes each reserving in
their own memory stored 16 MiB under 10). A reservation is made real at once by growing
the pending file to the reserved size, so the ledger always equals what is on disk:
committed content files plus live pending files, and a sweep can rebuild it exactly.
Created skills have a second ledger beside it under the same lock (see `ledger`).

An empty blob is its sidecar alone (no empty content file): 300 empty blobs are 300 files.
Their number is capped too (``[skills] blob_count_limit``, default 100,000, counted in
``.count`` the same way, a write in progress holding its place): bytes alone would let
zero-byte blobs fill the disk's inodes.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.noma.boundary import STATE_DIR_REFUSED, BoundaryError
from core.skills_runtime.ledger import (
    DEFAULT_CREATED_SKILLS_QUOTA_BYTES,
    STAGING_PREFIX,
    SkillQuotaExceeded,
    tree_cost,
)
from sandbox.bridge import BlobQuotaError

BLOB_ID = re.compile(r"blob:([0-9a-f]{32})\Z")
FULL_READ_LIMIT = 1024 * 1024
ReadMode = Literal["sample_head", "sample_tail", "full"]
DEFAULT_BLOB_QUOTA_BYTES = 1024**3
QUOTA_ENV = "NOMA_BLOB_QUOTA_BYTES"
LEDGER_NAME = ".usage"
SKILLS_LEDGER_NAME = ".skills-usage"
COUNT_LEDGER_NAME = ".count"
DEFAULT_BLOB_COUNT_LIMIT = 100_000
LOCK_NAME = ".quota.lock"
PENDING_PREFIX = ".pending-"
RUNS_DIR = ".runs"
RUN_ID = re.compile(r"run_[0-9a-f]{16}\Z")
CALLER = "caller"


def blob_quota_from(section: Mapping[str, Any], environ: Mapping[str, str]) -> int:
    """The quota from the environment, else ``[skills] blob_quota_bytes``, else 1 GiB."""
    raw: Any = environ.get(QUOTA_ENV) or section.get("blob_quota_bytes", DEFAULT_BLOB_QUOTA_BYTES)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = -1
    if isinstance(raw, bool) or value < 0:
        raise ValueError(
            f"blob quota must be a whole number of bytes >= 0 ({QUOTA_ENV} or "
            f"[skills] blob_quota_bytes), not {raw!r}"
        )
    return value


def blob_count_limit_from(section: Mapping[str, Any]) -> int:
    """``[skills] blob_count_limit`` (how many blobs a workspace may hold), else 100,000."""
    raw: Any = section.get("blob_count_limit", DEFAULT_BLOB_COUNT_LIMIT)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise ValueError(f"[skills] blob_count_limit must be a whole number >= 0, not {raw!r}")
    return raw


class BlobNotFound(LookupError):
    pass


class BlobTooLarge(ValueError):
    pass


class BlobQuotaExceeded(BlobQuotaError):
    """Writing ``requested`` more bytes would take the workspace past its blob quota."""

    def __init__(self, requested: int, used: int, quota: int) -> None:
        super().__init__(
            f"the workspace's blob quota is full: {used} of {quota} bytes are in use and "
            f"{requested} more were asked for. Delete blobs you no longer need or ask the "
            "operator to raise [skills] blob_quota_bytes."
        )
        self.requested = requested
        self.used = used
        self.quota = quota

    def details(self) -> dict[str, int]:
        return {
            "requested_bytes": self.requested,
            "used_bytes": self.used,
            "quota_bytes": self.quota,
        }


class BlobCountExceeded(BlobQuotaExceeded):
    """One more blob would take the workspace past its number of blobs."""

    def __init__(self, count: int, limit: int) -> None:
        BlobQuotaError.__init__(
            self,
            f"the workspace holds {count} blobs, its limit ([skills] blob_count_limit is "
            f"{limit}). Delete blobs you no longer need or ask the operator to raise it.",
        )
        self.requested = 0
        self.used = count
        self.quota = limit

    def details(self) -> dict[str, int]:
        return {"requested_blobs": 1, "blob_count": self.used, "blob_count_limit": self.quota}


@dataclass(frozen=True)
class BlobInfo:
    blob_id: str
    kind: str
    size_bytes: int
    owner: str | None = None  # "caller", "run:<run_id>", or None (written before owners)


@dataclass
class SweepReport:
    """What a sweep found (and removed, unless it was a dry run)."""

    pending_files: list[str] = field(default_factory=list)
    dead_runs: list[str] = field(default_factory=list)
    unowned_blobs: list[str] = field(default_factory=list)
    orphan_files: list[str] = field(default_factory=list)
    freed_bytes: int = 0
    ledger_before: int = 0
    ledger_after: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "pending_files": self.pending_files,
            "dead_runs": self.dead_runs,
            "unowned_blobs": self.unowned_blobs,
            "orphan_files": self.orphan_files,
            "freed_bytes": self.freed_bytes,
            "ledger_before": self.ledger_before,
            "ledger_after": self.ledger_after,
        }


def _held(path: Path) -> bool:
    """True if a live process holds ``path`` under flock (its writer or its run)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False  # gone, or not a plain file of ours (a symlink): nobody holds it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@dataclass(frozen=True)
class BlobSlice:
    content: str
    truncated: bool
    kind: str
    size_bytes: int


def _hex(blob_id: str) -> str:
    match = BLOB_ID.match(blob_id) if isinstance(blob_id, str) else None
    if match is None:
        raise BlobNotFound(f"{blob_id!r} is not a blob id (expected 'blob:' + 32 hex digits)")
    return match.group(1)


class BlobWriter:
    """A pending blob: chunks go to a temp file; ``commit`` makes it visible."""

    def __init__(self, store: BlobStore, kind: str, owner: str = CALLER) -> None:
        self._store = store
        self._kind = kind
        self._owner = owner
        fd, name = store._take_place()
        self._file = os.fdopen(fd, "wb")
        self._tmp = Path(name)
        self._size = 0
        self._done = False

    def write(self, text: str) -> None:
        """Append ``text``; over the quota the whole pending blob is dropped and it raises."""
        data = text.encode("utf-8", errors="surrogatepass")
        if not data:
            return
        try:
            self._store._reserve(len(data), self._file.fileno(), self._size)
        except BaseException:
            self.abort()
            raise
        self._size += len(data)
        self._file.write(data)

    def commit(self) -> str:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            # Still open (and so still locked) while it is renamed: closing first would let
            # a sweep take it for a dead writer's file in between.
            blob_id = self._store._publish(self._tmp, self._kind, self._size, self._owner)
        except BaseException:
            self.abort()
            raise
        self._done = True
        self._file.close()
        return blob_id

    def abort(self) -> None:
        if not self._done:
            self._done = True
            with self._store._locked():  # the file and its reservation go together
                self._file.close()
                with contextlib.suppress(OSError):
                    self._tmp.unlink()
                self._store._release(self._size)
                self._store._count_add(-1)


class BlobStore:
    """Blobs in one folder, with a quota shared by every process that opens the folder.

    The total (committed blobs and bytes being written) lives in a small ledger file
    (``.usage``) read and updated under an exclusive ``flock``, so a flow lane in the CLI
    and a running ``skills serve`` count each other's blobs, written or in progress.
    Created skills are counted in ``.skills-usage`` beside it, under the same lock, when
    the store is given their folder (``skills_root``). Opening the store rebuilds both
    ledgers from the files on disk, so a crash never leaves them wrong for long.
    """

    def __init__(
        self,
        root: Path,
        quota_bytes: int = DEFAULT_BLOB_QUOTA_BYTES,
        *,
        sweep: bool = True,
        skills_root: Path | None = None,
        skills_quota_bytes: int = DEFAULT_CREATED_SKILLS_QUOTA_BYTES,
        blob_count_limit: int = DEFAULT_BLOB_COUNT_LIMIT,
    ) -> None:
        self.root = root
        self.blob_count_limit = blob_count_limit
        self.quota_bytes = quota_bytes
        self.skills_root = skills_root
        self.skills_quota_bytes = skills_quota_bytes
        root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # O_NOFOLLOW: a cloned state folder may hold a planted ``.lock`` symlink.
        try:
            self._lock_fd = os.open(
                root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
            )
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise BoundaryError(
                STATE_DIR_REFUSED, f"{root / LOCK_NAME}: is a symbolic link"
            ) from exc
        # What crashed processes left goes before any new write (``sweep=False``: the
        # operator's ``noma skills blobs`` decides itself, e.g. for a dry run).
        self.last_sweep = self.sweep() if sweep else None

    def close(self) -> None:
        fd, self._lock_fd = self._lock_fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.close()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """This process's threads, then other processes: one quota decision at a time."""
        with self._lock:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _read_ledger(self, name: str = LEDGER_NAME) -> int:
        try:
            fd = os.open(self.root / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                value = int(os.read(fd, 64))
            finally:
                os.close(fd)
            if value < 0:
                raise ValueError(value)  # never written by us: a planted count
            return value
        except (OSError, ValueError):  # a planted symlink is not followed: recounted
            if name == SKILLS_LEDGER_NAME:
                return self._skills_disk_usage()
            if name == COUNT_LEDGER_NAME:
                return self._disk_count(held_only=False)
            return self.disk_usage() + self._pending_usage(held_only=False)

    def _skills_usage(self) -> int:
        """Created skills' cost (0 if nobody has created any on this folder)."""
        if self.skills_root is None and not (self.root / SKILLS_LEDGER_NAME).exists():
            return 0
        return self._read_ledger(SKILLS_LEDGER_NAME)

    def _skills_disk_usage(self) -> int:
        root = self.skills_root
        if root is None or not _is_dir(root):
            return 0
        with os.scandir(root) as it:
            return sum(tree_cost(Path(e.path)) for e in it)

    def _disk_count(self, *, held_only: bool) -> int:
        """Blobs on disk (one sidecar each) plus pending writes (live ones if ``held_only``)."""
        total = 0
        with os.scandir(self.root) as it:
            for entry in it:
                name = entry.name
                if (
                    len(name) == 37
                    and name.endswith(".json")
                    and BLOB_ID.match("blob:" + name[:32])
                ):
                    total += 1
                elif name.startswith(PENDING_PREFIX) and not name.endswith(".json"):
                    total += 1 if not held_only or _held(Path(entry.path)) else 0
        return total

    def _count_add(self, delta: int) -> None:
        """Change the number of blobs (lock held)."""
        self._write_ledger(self._read_ledger(COUNT_LEDGER_NAME) + delta, COUNT_LEDGER_NAME)

    def _take_place(self) -> tuple[int, str]:
        """Count one more blob (a write starting) and make its pending file, locked."""
        try:
            return self._try_take_place()
        except BlobCountExceeded:
            self.sweep()  # dead processes' writes may be what fills it
            return self._try_take_place()

    def _try_take_place(self) -> tuple[int, str]:
        with self._locked():  # a sweep never sees the file before its lock is held
            count = self._read_ledger(COUNT_LEDGER_NAME)
            if count + 1 > self.blob_count_limit:
                raise BlobCountExceeded(count, self.blob_count_limit)
            fd, name = tempfile.mkstemp(prefix=PENDING_PREFIX, dir=self.root)
            fcntl.flock(fd, fcntl.LOCK_EX)  # held until the file is renamed or removed
            self._write_ledger(count + 1, COUNT_LEDGER_NAME)  # counted before the file was
        return fd, name

    def _pending_usage(self, *, held_only: bool) -> int:
        """Bytes reserved by pending writes (their files are grown to what they reserved)."""
        total = 0
        with os.scandir(self.root) as it:
            for entry in it:
                path = Path(entry.path)
                pending = entry.name.startswith(PENDING_PREFIX)
                if pending and entry.is_file(follow_symlinks=False):
                    total += _size(path) if not held_only or _held(path) else 0
        return total

    def _write_ledger(self, total: int, name: str = LEDGER_NAME) -> None:
        tmp = self.root / f"{name}.tmp"
        # A name planted there (a symlink out of the folder) is removed, never written
        # through: the temp is created fresh (O_EXCL | O_NOFOLLOW).
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, str(max(0, total)).encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, self.root / name)

    def disk_usage(self) -> int:
        """Bytes held by blob content files on disk (committed or orphaned by a crash)."""
        total = 0
        with os.scandir(self.root) as it:
            for entry in it:
                if len(entry.name) == 32 and entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
        return total

    def usage(self) -> int:
        """Bytes counted against the quota, by every process: blobs (committed and being
        written) and created skills."""
        with self._locked():
            return self._read_ledger() + self._skills_usage()

    def skills_usage(self) -> int:
        """What created skills cost (counted against both quotas)."""
        with self._locked():
            return self._skills_usage()

    def _reserve(self, size: int, fd: int, offset: int) -> None:
        try:
            self._try_reserve(size, fd, offset)
        except BlobQuotaExceeded:
            # What dead processes left may be what fills the quota (a long-running server
            # otherwise only sweeps when it starts): sweep, then decide again.
            self.sweep()
            self._try_reserve(size, fd, offset)

    def _try_reserve(self, size: int, fd: int, offset: int) -> None:
        with self._locked():
            blobs = self._read_ledger()
            used = blobs + self._skills_usage()
            if used + size > self.quota_bytes:
                raise BlobQuotaExceeded(size, used, self.quota_bytes)
            # The pending file takes its reserved size now (sparse), so another process's
            # sweep, which counts pending files by size, counts this reservation too.
            os.ftruncate(fd, offset + size)
            self._write_ledger(blobs + size)

    def _release(self, size: int) -> None:
        """Give back a pending write's bytes (its file is already gone; lock held)."""
        if size:
            self._write_ledger(self._read_ledger() - size)

    def admit_skill(self, stage: Callable[[], Path], publish: Callable[[Path], None]) -> int:
        """Store a created skill only if it fits: under the lock ``stage()`` writes it to a
        staging folder, its cost is measured there, and ``publish`` moves it into place
        only if both quotas allow; over either, `SkillQuotaExceeded` and nothing is
        counted (the caller removes the staging folder). Returns the cost."""
        if self.skills_root is None:
            raise ValueError("this blob store keeps no created skills")
        with self._locked():
            staging = stage()
            cost = tree_cost(staging)
            skills = self._skills_usage()
            if skills + cost > self.skills_quota_bytes:
                raise SkillQuotaExceeded(
                    cost, skills, self.skills_quota_bytes, "created_skills_quota_bytes"
                )
            used = self._read_ledger() + skills
            if used + cost > self.quota_bytes:
                raise SkillQuotaExceeded(cost, used, self.quota_bytes, "blob_quota_bytes")
            publish(staging)
            self._write_ledger(skills + cost, SKILLS_LEDGER_NAME)
        return cost

    def delete(self, blob_id: str) -> None:
        """Remove a blob (sidecar first, so it stops existing before its bytes go)."""
        hex_id = _hex(blob_id)
        with self._locked():
            self.info(blob_id)
            size = _size(self.root / hex_id)  # the bytes on disk, whatever a sidecar says
            (self.root / f"{hex_id}.json").unlink()
            with contextlib.suppress(FileNotFoundError):
                (self.root / hex_id).unlink()
            self._write_ledger(self._read_ledger() - size)
            self._count_add(-1)

    def create(self, content: str, kind: str) -> BlobInfo:
        writer = self.open_writer(kind)
        try:
            writer.write(content)
            blob_id = writer.commit()
        except BaseException:
            writer.abort()
            raise
        return self.info(blob_id)

    def open_writer(self, kind: str) -> BlobWriter:
        return BlobWriter(self, kind)

    def for_run(self, run_id: str) -> RunBlobs:
        """The store as run ``run_id`` sees it (its blobs are owned by the run)."""
        return RunBlobs(self, run_id)

    def _publish(self, tmp: Path, kind: str, size: int, owner: str = CALLER) -> str:
        """Make a written blob visible and move its bytes from reserved to committed."""
        hex_id = secrets.token_hex(16)
        meta = {"kind": kind, "size_bytes": size, "created_at": time.time(), "owner": owner}
        meta_tmp = self.root / f"{PENDING_PREFIX}{hex_id}.json"
        try:
            with self._locked():  # the files and the ledger change together
                with open(meta_tmp, "x") as fh:
                    json.dump(meta, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                if size:
                    # Its bytes are already in the ledger (reserved): they stay counted.
                    os.rename(tmp, self.root / hex_id)
                else:
                    tmp.unlink()  # an empty blob is its sidecar alone
                os.rename(meta_tmp, self.root / f"{hex_id}.json")
        except BaseException:
            meta_tmp.unlink(missing_ok=True)
            raise
        return f"blob:{hex_id}"

    def info(self, blob_id: str) -> BlobInfo:
        hex_id = _hex(blob_id)
        try:
            meta = json.loads((self.root / f"{hex_id}.json").read_text())
            owner = meta.get("owner")
            return BlobInfo(
                blob_id=blob_id,
                kind=str(meta["kind"]),
                size_bytes=int(meta["size_bytes"]),
                owner=owner if isinstance(owner, str) else None,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BlobNotFound(f"no blob {blob_id!r}") from exc

    def blobs(self) -> list[BlobInfo]:
        """Every committed blob, oldest name first (for the operator's listing)."""
        out = []
        for name in sorted(os.listdir(self.root)):
            if len(name) == 37 and name.endswith(".json") and BLOB_ID.match("blob:" + name[:32]):
                with contextlib.suppress(BlobNotFound):
                    out.append(self.info("blob:" + name[:32]))
        return out

    # ---------------------------------------------------------------- the sweep

    def sweep(self, *, dry_run: bool = False) -> SweepReport:
        """Find (and unless ``dry_run`` remove) what dead processes left behind, then make
        the ledger equal the disk. Everything a live process holds is left alone."""
        report = SweepReport()
        with self._locked():
            report.ledger_before = self._read_ledger()
            with os.scandir(self.root) as entries:  # d_type: no stat per entry
                names = [e.name for e in entries if not e.is_dir(follow_symlinks=False)]
            for name in sorted(n for n in names if n.startswith(PENDING_PREFIX)):
                path = self.root / name
                if not _held(path):
                    report.pending_files.append(name)
                    report.freed_bytes += _size(path)
                    if not dry_run:
                        _remove(path)
            dead = self._dead_runs()
            report.dead_runs = sorted(dead)
            hexes = {n for n in names if len(n) == 32 and BLOB_ID.match("blob:" + n)}
            sidecars = {n[:32] for n in names if len(n) == 37 and n.endswith(".json")}
            sidecars = {h for h in sidecars if BLOB_ID.match("blob:" + h)}
            for hex_id in sorted(sidecars) if dead else ():  # owners matter only then
                try:
                    owner = self.info("blob:" + hex_id).owner
                except BlobNotFound:
                    owner = None
                if owner is not None and owner.removeprefix("run:") in dead:
                    report.unowned_blobs.append("blob:" + hex_id)
                    report.freed_bytes += _size(self.root / hex_id)
                    if not dry_run:
                        _remove(self.root / f"{hex_id}.json")
                        _remove(self.root / hex_id)
            for hex_id in sorted(hexes ^ sidecars):  # half a blob: a crash mid-publish
                if hex_id in sidecars and self._empty(hex_id):
                    continue  # an empty blob: its sidecar alone is the whole of it
                name = hex_id if hex_id in hexes else f"{hex_id}.json"
                report.orphan_files.append(name)
                report.freed_bytes += _size(self.root / name)
                if not dry_run:
                    _remove(self.root / name)
            if not dry_run:
                for run_id in dead:
                    _remove(self.root / RUNS_DIR / run_id)
                # Live writers' pending files are grown to what they reserved: counted.
                self._write_ledger(self.disk_usage() + self._pending_usage(held_only=True))
                self._write_ledger(self._disk_count(held_only=True), COUNT_LEDGER_NAME)
                if self.skills_root is not None:
                    self._sweep_skills()
            report.ledger_after = self._read_ledger()
        return report

    def _sweep_skills(self) -> None:
        """Remove staging folders (a creator stages under this lock, which the sweep holds:
        any left are a dead process's) and recount created skills from the disk."""
        root = self.skills_root
        if root is not None and _is_dir(root):
            for name in os.listdir(root):
                path = root / name
                if name.startswith(STAGING_PREFIX) and _is_dir(path):
                    shutil.rmtree(path, ignore_errors=True)
        self._write_ledger(self._skills_disk_usage(), SKILLS_LEDGER_NAME)

    def _empty(self, hex_id: str) -> bool:
        try:
            return self.info("blob:" + hex_id).size_bytes == 0
        except BlobNotFound:
            return False

    def _dead_runs(self) -> set[str]:
        runs = self.root / RUNS_DIR
        if not _is_dir(runs):
            return set()  # none yet, or something planted in its place: no journals
        return {
            n
            for n in os.listdir(runs)
            if RUN_ID.match(n) and not _is_dir(runs / n) and not _held(runs / n)
        }

    def _open_journal(self, run_id: str) -> int:
        runs = self.root / RUNS_DIR
        runs.mkdir(mode=0o700, exist_ok=True)
        with self._locked():  # a sweep never sees the journal before its lock is held
            fd = os.open(
                runs / run_id, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )  # fmt: skip
            fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def _close_journal(self, run_id: str, fd: int) -> None:
        (self.root / RUNS_DIR / run_id).unlink(missing_ok=True)
        os.close(fd)

    def exists(self, blob_id: str) -> bool:
        try:
            self.info(blob_id)
        except BlobNotFound:
            return False
        return True

    def read(self, blob_id: str, mode: ReadMode, max_bytes: int) -> BlobSlice:
        """A text view of the blob, never splitting a UTF-8 character."""
        info = self.info(blob_id)
        size = info.size_bytes
        if size == 0:  # an empty blob has no content file
            return BlobSlice(content="", truncated=False, kind=info.kind, size_bytes=0)
        with open(self.root / _hex(blob_id), "rb") as fh:
            if mode == "full":
                if size > FULL_READ_LIMIT:
                    raise BlobTooLarge(
                        f"blob is {size} bytes; full reads are limited to {FULL_READ_LIMIT} "
                        "bytes. Use sample_head or sample_tail, or process it in a run."
                    )
                data, truncated = fh.read(), False
                text = data.decode("utf-8", errors="replace")
            elif mode == "sample_head":
                data = fh.read(max_bytes)
                truncated = size > len(data)
                text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)
            else:
                fh.seek(max(0, size - max_bytes))
                data = fh.read(max_bytes)
                truncated = size > len(data)
                start = 0
                while start < len(data) and start < 4 and (data[start] & 0xC0) == 0x80:
                    start += 1  # skip the tail of a character cut at the front
                text = data[start:].decode("utf-8", errors="replace")
        return BlobSlice(content=text, truncated=truncated, kind=info.kind, size_bytes=size)

    def read_chunks(self, blob_id: str, chunk_chars: int) -> Iterator[str]:
        """The blob as text in pieces (for sandbox reads); KeyError if it does not exist."""
        try:
            info = self.info(blob_id)
        except BlobNotFound as exc:
            raise KeyError(blob_id) from exc
        path = self.root / _hex(blob_id)
        if info.size_bytes == 0:
            return iter(())  # an empty blob has no content file

        def chunks() -> Iterator[str]:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            with open(path, "rb") as fh:
                while data := fh.read(chunk_chars):
                    yield decoder.decode(data)
                yield decoder.decode(b"", final=True)

        return chunks()


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Unlink a file (a symlink itself, never its target); a failure leaves it for later."""
    with contextlib.suppress(OSError):
        path.unlink()


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


class RunBlobs:
    """The blob store as one run sees it (the sandbox's bridge): every blob the run writes
    is owned by the run. Use it as a context manager around the run: leaving normally
    completes the run (its blobs stay, named by its record); leaving by an exception
    deletes them; a process that dies inside leaves a journal no one holds, and the next
    sweep deletes them."""

    def __init__(self, store: BlobStore, run_id: str) -> None:
        if not RUN_ID.match(run_id):
            raise ValueError(f"not a run id: {run_id!r}")
        self.store = store
        self.run_id = run_id
        self.blob_ids: list[str] = []
        self._fd = -1

    def __enter__(self) -> RunBlobs:
        self._fd = self.store._open_journal(self.run_id)
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> None:
        if kind is not None:
            for blob_id in self.blob_ids:
                with contextlib.suppress(BlobNotFound, OSError):
                    self.store.delete(blob_id)
        self.store._close_journal(self.run_id, self._fd)

    def read_chunks(self, blob_id: str, chunk_chars: int) -> Iterator[str]:
        return self.store.read_chunks(blob_id, chunk_chars)

    def open_writer(self, kind: str) -> BlobWriter:
        run = self

        class _Writer(BlobWriter):
            def commit(self) -> str:
                blob_id = super().commit()
                run.blob_ids.append(blob_id)
                return blob_id

        return _Writer(self.store, kind, owner=f"run:{self.run_id}")

    def delete(self, blob_id: str) -> None:
        self.store.delete(blob_id)
