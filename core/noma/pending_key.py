"""The user's key for pending records: recovery acts only on records this user wrote.

A pending record (`core.noma.commit`) tells recovery to cut a transcript back and append
records to it. It lives beside the document, inside a workspace anyone may have written,
so a record is only acted on when its HMAC-SHA256 checks out under a key kept outside
every workspace: ``$XDG_STATE_HOME/noma-workbench/pending.key`` (default
``~/.local/state/noma-workbench/``), 32 random bytes made on first use, file 0600 in a
0700 folder. A key or folder that is a symlink or someone else's is refused
(`BoundaryError` ``state_dir_refused``): the key would be an attacker's.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from ..user_dirs import state_home
from .boundary import STATE_DIR_REFUSED, BoundaryError, Folder, owned_directory, read_all

KEY_FILE = "pending.key"
KEY_BYTES = 32


def user_state_dir() -> Path:
    """``$XDG_STATE_HOME/noma-workbench`` (the user's, never a workspace's), made 0700 and
    refused when it is a symlink or someone else's."""
    home = state_home()
    home.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return owned_directory(home)


_cache: dict[Path, bytes] = {}


def pending_key() -> bytes:
    """The key, created on first use (atomic: a candidate is hard-linked into place)."""
    folder_path = user_state_dir()
    cached = _cache.get(folder_path)
    if cached is not None:
        return cached
    with Folder.open(folder_path) as folder:
        key = _read(folder)
        if key is None:
            candidate = f".{KEY_FILE}.{secrets.token_hex(6)}"
            folder.write_new(candidate, secrets.token_bytes(KEY_BYTES), 0o600)
            try:
                os.link(candidate, KEY_FILE, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
            except FileExistsError:
                pass  # another process made it first: use theirs
            finally:
                with contextlib.suppress(OSError):
                    folder.unlink(candidate)
            folder.fsync()
            key = _read(folder)
        if key is None:
            raise BoundaryError(STATE_DIR_REFUSED, f"{folder_path / KEY_FILE}: cannot be read")
    _cache[folder_path] = key
    return key


def _read(folder: Folder) -> bytes | None:
    try:
        fd = folder.open_file(KEY_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except BoundaryError as exc:
        raise BoundaryError(STATE_DIR_REFUSED, exc.message) from exc
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise BoundaryError(
                STATE_DIR_REFUSED,
                f"{folder.path / KEY_FILE}: must be this user's and mode 0600",
            )
        key = read_all(fd)
    finally:
        os.close(fd)
    if len(key) != KEY_BYTES:
        raise BoundaryError(STATE_DIR_REFUSED, f"{folder.path / KEY_FILE}: not a key")
    return key


def sign(payload: bytes, identity: str) -> str:
    """HMAC-SHA256 of the document's identity and the payload, hex."""
    mac = hmac.new(pending_key(), digestmod=hashlib.sha256)
    mac.update(identity.encode("utf-8", errors="surrogateescape"))
    mac.update(b"\0")
    mac.update(payload)
    return mac.hexdigest()


def verify(payload: bytes, identity: str, tag: str) -> bool:
    return hmac.compare_digest(sign(payload, identity), tag)
