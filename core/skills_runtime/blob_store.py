"""Blobs: content files named by random ids, with a small JSON sidecar for kind and size.

The id is ``blob:`` + 32 random hex digits and is checked against that exact shape before
any path is built from it, so a blob id can never name a file outside the store. Writes
are atomic (temp file, fsync, rename); the sidecar is written last and is the commit
point, so a crash leaves either no blob or a whole one.

A workspace-wide quota caps the bytes all blobs may hold (default 1 GiB, ``[skills]
blob_quota_bytes`` in ``noma-workbench.toml`` or ``NOMA_BLOB_QUOTA_BYTES``), on top of the
sandbox's per-run limits. Bytes are reserved under a lock *before* they are written, so
concurrent creates can never together pass the cap; a refused write reserves nothing and
leaves no file. Other processes on the same folder share the count (see `BlobStore`).
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
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.noma.boundary import STATE_DIR_REFUSED, BoundaryError
from sandbox.bridge import BlobQuotaError

BLOB_ID = re.compile(r"blob:([0-9a-f]{32})\Z")
FULL_READ_LIMIT = 1024 * 1024
ReadMode = Literal["sample_head", "sample_tail", "full"]
DEFAULT_BLOB_QUOTA_BYTES = 1024**3
QUOTA_ENV = "NOMA_BLOB_QUOTA_BYTES"
LEDGER_NAME = ".usage"
LOCK_NAME = ".quota.lock"


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


@dataclass(frozen=True)
class BlobInfo:
    blob_id: str
    kind: str
    size_bytes: int


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

    def __init__(self, store: BlobStore, kind: str) -> None:
        self._store = store
        self._kind = kind
        fd, name = tempfile.mkstemp(prefix=".pending-", dir=store.root)
        self._file = os.fdopen(fd, "wb")
        self._tmp = Path(name)
        self._size = 0
        self._done = False

    def write(self, text: str) -> None:
        """Append ``text``; over the quota the whole pending blob is dropped and it raises."""
        data = text.encode("utf-8", errors="surrogatepass")
        try:
            self._store._reserve(len(data))
        except BlobQuotaExceeded:
            self.abort()
            raise
        self._size += len(data)
        self._file.write(data)

    def commit(self) -> str:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            blob_id = self._store._publish(self._tmp, self._kind, self._size)
        except BaseException:
            self.abort()
            raise
        self._done = True
        return blob_id

    def abort(self) -> None:
        if not self._done:
            self._done = True
            self._file.close()
            with contextlib.suppress(OSError):
                self._tmp.unlink()
            self._store._release(self._size)


class BlobStore:
    """Blobs in one folder, with a quota shared by every process that opens the folder.

    The committed total lives in a small ledger file (``.usage``) read and updated under an
    exclusive ``flock``, so a flow lane in the CLI and a running ``skills serve`` count each
    other's blobs; bytes being written are reserved in the writing process. Opening the
    store rebuilds the ledger from the files on disk, so a crash never leaves it wrong for
    long.
    """

    def __init__(self, root: Path, quota_bytes: int = DEFAULT_BLOB_QUOTA_BYTES) -> None:
        self.root = root
        self.quota_bytes = quota_bytes
        root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._reserved = 0
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
        with self._locked():
            self._write_ledger(self.disk_usage())

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

    def _read_ledger(self) -> int:
        try:
            fd = os.open(self.root / LEDGER_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                return int(os.read(fd, 64))
            finally:
                os.close(fd)
        except (OSError, ValueError):  # a planted symlink is not followed: recounted
            return self.disk_usage()

    def _write_ledger(self, total: int) -> None:
        tmp = self.root / f"{LEDGER_NAME}.tmp"
        # A name planted there (a symlink out of the folder) is removed, never written
        # through: the temp is created fresh (O_EXCL | O_NOFOLLOW).
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, str(max(0, total)).encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, self.root / LEDGER_NAME)

    def disk_usage(self) -> int:
        """Bytes held by blob content files on disk (committed or orphaned by a crash)."""
        total = 0
        with os.scandir(self.root) as it:
            for entry in it:
                if len(entry.name) == 32 and entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
        return total

    def usage(self) -> int:
        """Bytes counted against the quota: committed blobs plus this process's writes."""
        with self._locked():
            return self._read_ledger() + self._reserved

    def _reserve(self, size: int) -> None:
        with self._locked():
            used = self._read_ledger() + self._reserved
            if used + size > self.quota_bytes:
                raise BlobQuotaExceeded(size, used, self.quota_bytes)
            self._reserved += size

    def _release(self, size: int) -> None:
        with self._lock:
            self._reserved -= size

    def delete(self, blob_id: str) -> None:
        """Remove a blob (sidecar first, so it stops existing before its bytes go)."""
        hex_id = _hex(blob_id)
        with self._locked():
            size = self.info(blob_id).size_bytes
            (self.root / f"{hex_id}.json").unlink()
            with contextlib.suppress(FileNotFoundError):
                (self.root / hex_id).unlink()
            self._write_ledger(self._read_ledger() - size)

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

    def _publish(self, tmp: Path, kind: str, size: int) -> str:
        """Make a written blob visible and move its bytes from reserved to committed."""
        hex_id = secrets.token_hex(16)
        meta = {"kind": kind, "size_bytes": size, "created_at": time.time()}
        fd, meta_tmp = tempfile.mkstemp(prefix=".pending-", dir=self.root)
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(meta, fh)
                fh.flush()
                os.fsync(fh.fileno())
            with self._locked():  # the files and the ledger change together
                os.rename(tmp, self.root / hex_id)
                os.rename(meta_tmp, self.root / f"{hex_id}.json")
                self._write_ledger(self._read_ledger() + size)
                self._reserved -= size
        except BaseException:
            Path(meta_tmp).unlink(missing_ok=True)
            raise
        return f"blob:{hex_id}"

    def info(self, blob_id: str) -> BlobInfo:
        hex_id = _hex(blob_id)
        try:
            meta = json.loads((self.root / f"{hex_id}.json").read_text())
        except (OSError, ValueError) as exc:
            raise BlobNotFound(f"no blob {blob_id!r}") from exc
        return BlobInfo(blob_id=blob_id, kind=str(meta["kind"]), size_bytes=int(meta["size_bytes"]))

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
            self.info(blob_id)
        except BlobNotFound as exc:
            raise KeyError(blob_id) from exc
        path = self.root / _hex(blob_id)

        def chunks() -> Iterator[str]:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            with open(path, "rb") as fh:
                while data := fh.read(chunk_chars):
                    yield decoder.decode(data)
                yield decoder.decode(b"", final=True)

        return chunks()
