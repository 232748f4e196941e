"""The per-user server token: a random secret in a 0600 file only its owner can read.

A loopback server is not private on a shared machine: any local user can connect to
127.0.0.1. So every server (``noma serve``, ``noma skills serve``) asks every caller for a
token, and for the owner's own clients that token is this one, created by the first server
to start and found by the app, the CLI (``noma hub token local``) and the tests in the same
place, so nobody types it. Another local user cannot read the file, so cannot call.

Where: ``$XDG_RUNTIME_DIR/noma-workbench/server-token`` (a per-login tmpfs the system clears
at logout, so the token rotates with sessions), else ``$XDG_STATE_HOME/noma-workbench/``.
The folder must be a real directory owned by this user and closed to others (0700), the
file a regular 0600 file of this user holding one well-formed token; anything else (a
symlink, a file another user could have written or read, garbage) is replaced by a fresh
token, never used. Written through a temp file and a hard link, so two servers starting at
once agree on one token.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

from ..user_dirs import APP_DIR, state_home

FILE_NAME = "server-token"
PREFIX = "nloc_"
TOKEN_RE = re.compile(r"^nloc_[A-Za-z0-9_-]{43}$")


class LocalTokenError(OSError):
    """The token folder cannot be made private (another user owns it, or it is a file)."""


def _runtime_dir() -> Path | None:
    value = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if not value or not Path(value).is_absolute():
        return None
    try:
        st = os.stat(value)
    except OSError:
        return None
    # The spec's runtime dir is the user's own, 0700; one that is not is not used.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        return None
    return Path(value) / APP_DIR


def token_dir() -> Path:
    """The folder holding the token: the runtime dir when it is the user's, else state."""
    return _runtime_dir() or state_home()


def token_path() -> Path:
    return token_dir() / FILE_NAME


def _private_dir(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise LocalTokenError(f"{folder}: not a folder of this user; no server token kept there")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)


def _read(path: Path) -> str | None:
    """The token in ``path`` if the file is this user's, private and well formed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        data = os.read(fd, 256)
    finally:
        os.close(fd)
    text = data.decode("ascii", "replace").strip()
    return text if TOKEN_RE.match(text) else None


def read_local_token() -> str | None:
    """The owner's server token, or None when no server has made one (or it is unsafe)."""
    try:
        return _read(token_path())
    except OSError:
        return None


def load_or_create_local_token() -> str:
    """The token a starting server accepts: the existing one, or a new one written 0600."""
    folder = token_dir()
    _private_dir(folder)
    path = folder / FILE_NAME
    existing = _read(path)
    if existing is not None:
        return existing
    token = PREFIX + secrets.token_urlsafe(32)
    temp = folder / f".{FILE_NAME}.{secrets.token_hex(8)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, f"{token}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        try:
            os.link(temp, path)  # atomic, and never over a token another server just wrote
        except FileExistsError:
            winner = _read(path)
            if winner is not None:
                return winner
            os.replace(temp, path)  # the old file was unsafe: replaced (a symlink itself)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return token


def same_token(presented: str, expected: str) -> bool:
    """Constant-time comparison (no timing oracle on the owner's secret)."""
    return hmac.compare_digest(presented.encode(), expected.encode())
