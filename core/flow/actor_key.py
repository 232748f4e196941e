"""The workspace's actor key: the secret that actor hashes in the flow store are keyed with.

`provenance.actor` and every ``actor_hash`` column are HMAC-SHA256(key, actor id), so a
short name cannot be recovered from the database by hashing a dictionary of names, and the
same person hashes differently in two workspaces. The key is 32 random bytes, hex in
``<state dir>/actor.key`` (mode 0600), created on first use and never written to the DB.

Creation is atomic across processes: each writes its candidate to a private temp file
(``O_EXCL``, 0600, fsynced) and hard-links it into place; `link` fails if the name exists,
so exactly one candidate wins and every process reads that one. A reader therefore never
sees a half-written key, and a candidate a killed process left behind is swept later. A
key file that is present but unreadable as a key is a fault (regenerating it would
silently re-key every actor and orphan their personal runs).
"""

from __future__ import annotations

import os
import secrets
import stat
import time
from pathlib import Path

KEY_FILE = "actor.key"
KEY_BYTES = 32


class ActorKeyError(OSError):
    """The key file exists but does not hold a key."""


STALE_TEMP_SECONDS = 60


def load_actor_key(state_dir: Path) -> bytes:
    """The workspace's key, creating it on first use."""
    path = state_dir / KEY_FILE
    try:
        key = _read(path)
    except FileNotFoundError:
        _create(path)
        key = _read(path)
    _sweep(state_dir)
    return key


def _sweep(state_dir: Path) -> None:
    """Remove candidates a killed process left behind (old enough to be no one's now)."""
    now = time.time()
    for tmp in state_dir.glob(f".{KEY_FILE}.*"):
        try:
            if now - tmp.lstat().st_mtime > STALE_TEMP_SECONDS:
                tmp.unlink()
        except FileNotFoundError:
            pass


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ActorKeyError(f"{path}: not a regular file")
        if stat.S_IMODE(mode) & 0o077:  # loosened by hand or a copy: close it again
            os.fchmod(fd, 0o600)
        text = os.read(fd, 4 * KEY_BYTES).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise ActorKeyError(f"{path}: not an actor key ({KEY_BYTES} bytes as hex)")
    return key


def _create(path: Path) -> None:
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(6)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, (secrets.token_bytes(KEY_BYTES).hex() + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except (FileExistsError, FileNotFoundError):
            pass  # another process won the race (and may have swept this candidate)
        else:
            _fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
