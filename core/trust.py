"""Workspace trust: which folders the user allowed to reach outside themselves.

A workspace folder may have been written by anyone (a clone, a shared drive, an agent).
Reading, checking, exporting and editing its documents is safe anywhere; its config is not:
``[hub] url`` receives the user's hub token, ``[store] url`` the PostgreSQL password,
``[secrets]`` hands the server's environment to the folder's skills, ``[gates]`` turn run
writes and execution on. Those settings (`COVERED`) apply only once the user has trusted
the folder (``noma trust PATH`` or the app's prompt), in the manner of VS Code's Workspace
Trust, git's ``safe.directory`` and direnv's ``allow``.

The record lives in the user's config dir (``trusted-folders.json``), never in a folder: an
entry binds the folder's real path, its device and inode (a folder replaced at the same path
is a stranger) and a sha256 over the canonical form of exactly the covered settings. When
those settings change the folder reads as ``changed`` until trusted again, and the per-key
hashes kept beside the total say which keys changed (the values themselves are never
copied: a store URL may hold a password).

The file is refused (everything reads as untrusted, with a coded problem) if it is a
symlink, not a regular file, not owned by the user or writable by others; writes are atomic
(temp file, fsync, rename) under a lock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import enum
import fcntl
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .user_dirs import config_home

TRUST_FILE = "trusted-folders.json"
LOCK_FILE = ".trusted-folders.lock"
FORMAT = 1
# The config sections that can reach outside the folder (or loosen what it may do there).
COVERED = ("gates", "policy", "hub", "store", "secrets", "skills")
# State a folder may ship that is never used from it while it is untrusted (hub tokens are
# never read from a folder at all: they live in the user's state dir).
SHIPPED_STATE_NOTES = {
    "actor.key": "not used while untrusted (trusting uses it: if it came with the folder, "
    "whoever made it can recompute your actor hashes)",
    "hub.sqlite3": "never used (hub tokens live in your state dir, never in a folder)",
    "secrets.toml": "not read",
    "created-skills": "not loaded or run",
}
TRUST_COMMAND = "noma trust"
MAX_TRUST_FILE_BYTES = 16 * 1024 * 1024

# Problem codes: the trust store itself could not be used (everything reads as untrusted).
TRUST_STORE_UNSAFE = "trust_store_unsafe"
TRUST_STORE_CORRUPT = "trust_store_corrupt"


class TrustState(enum.StrEnum):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    CHANGED = "changed"  # trusted once, but the covered settings differ now


class TrustStoreError(OSError):
    """The trust file cannot be used safely; ``code`` says which way."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class TrustStatus:
    """Whether a folder's covered settings apply, and if not, why."""

    state: TrustState
    reason: str
    changed: tuple[str, ...] = ()  # covered keys that differ from what was trusted
    problem: str | None = None  # a trust store problem code, if the store was refused

    @property
    def trusted(self) -> bool:
        return self.state is TrustState.TRUSTED

    @classmethod
    def untrusted(cls, reason: str = "not trusted") -> TrustStatus:
        return cls(TrustState.UNTRUSTED, reason)


@dataclass(frozen=True, slots=True)
class TrustEntry:
    path: str
    device: int
    inode: int
    settings_sha256: str
    keys: dict[str, str] = field(default_factory=dict)  # key path -> sha256 of its value
    trusted_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "device": self.device,
            "inode": self.inode,
            "settings_sha256": self.settings_sha256,
            "keys": dict(sorted(self.keys.items())),
            "trusted_at": self.trusted_at,
        }

    @classmethod
    def from_json(cls, raw: Any) -> TrustEntry:
        if not isinstance(raw, dict):
            raise ValueError("an entry is not an object")
        keys = raw.get("keys", {})
        if not isinstance(keys, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
        ):
            raise ValueError("an entry's keys are not a map of hashes")
        path, device, inode = raw.get("path"), raw.get("device"), raw.get("inode")
        digest, when = raw.get("settings_sha256"), raw.get("trusted_at", "")
        if not (
            isinstance(path, str)
            and isinstance(device, int)
            and isinstance(inode, int)
            and isinstance(digest, str)
            and isinstance(when, str)
        ):
            raise ValueError("an entry lacks path, device, inode or settings_sha256")
        return cls(path, device, inode, digest, dict(keys), when)


# ------------------------------------------------------------------ the covered settings


def covered_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Exactly the settings trust covers: the `COVERED` sections the config has."""
    return {name: config[name] for name in COVERED if name in config}


def _canonical(value: Any) -> bytes:
    def tagged(obj: Any) -> Any:  # TOML dates and times: tagged, so "x" != a date "x"
        if isinstance(obj, dt.date | dt.time):
            return {"$" + type(obj).__name__: obj.isoformat()}
        raise TypeError(f"not a TOML value: {type(obj).__name__}")

    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=tagged
    )
    return text.encode("utf-8")


def settings_sha256(config: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of the covered settings (sorted keys, no spaces)."""
    return hashlib.sha256(_canonical(covered_settings(config))).hexdigest()


def _key_name(key: str) -> str:
    plain = key.replace("_", "").replace("-", "").isalnum()
    return key if plain else json.dumps(key, ensure_ascii=False)


def key_hashes(config: Mapping[str, Any]) -> dict[str, str]:
    """Each covered leaf (``gates.run_writes_enabled``, ``secrets.grants."a.b"``) -> the
    sha256 of its value: enough to say which keys changed, without keeping any value."""
    out: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                walk(f"{prefix}.{_key_name(str(key))}", inner)
        else:
            out[prefix] = hashlib.sha256(_canonical(value)).hexdigest()

    for name, section in covered_settings(config).items():
        walk(name, section)
    return out


def changed_keys(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    """Keys added, removed or given another value, sorted."""
    keys = set(before) | set(after)
    return tuple(sorted(k for k in keys if before.get(k) != after.get(k)))


def redact_url(url: str) -> str:
    """A URL without its user info (a password must never reach a screen or a log)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "(not a URL)"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


# ------------------------------------------------------------------ what is off, and why


def restrictions(root: Path, config: Mapping[str, Any]) -> list[str]:
    """One line per thing the folder asks for that stays off while it is untrusted."""
    lines: list[str] = []
    gates = config.get("gates")
    if isinstance(gates, dict) and any(v is True for v in gates.values()):
        on = ", ".join(sorted(k for k, v in gates.items() if v is True))
        lines.append(f"[gates] {on}: off (run writes and execution stay disabled)")
    hub = config.get("hub")
    if isinstance(hub, dict) and isinstance(hub.get("url"), str):
        lines.append(
            f"[hub] url {redact_url(hub['url'])}: not contacted (NOMA_HUB_TOKEN is not sent)"
        )
    store = config.get("store")
    if isinstance(store, dict) and isinstance(store.get("url"), str):
        lines.append(
            f"[store] url {redact_url(store['url'])}: not used (no password is sent; "
            "runs stay in the folder's local store)"
        )
    if isinstance(config.get("secrets"), dict) and config["secrets"]:
        lines.append("[secrets]: no grant, from_env or values file is used (skills get none)")
    for name in ("policy", "skills"):
        if isinstance(config.get(name), dict) and config[name]:
            lines.append(f"[{name}]: the defaults apply instead")
    if (root / "skills").is_dir():
        lines.append("skills/: the folder's own skills are not loaded or run")
    state = root / ".noma-workbench"
    for name, what in SHIPPED_STATE_NOTES.items():
        if (state / name).exists() or (state / name).is_symlink():
            lines.append(f".noma-workbench/{name}: {what}")
    return lines


def summary(root: Path, config: Mapping[str, Any], status: TrustStatus) -> list[str]:
    """What trusting turns on, for the CLI prompt and the app's trust screen: every covered
    setting as the folder has it (URLs without their user info), then what is off now."""
    lines = []
    for name, section in covered_settings(config).items():
        if not isinstance(section, dict):
            lines.append(f"  [{name}] = {section!r}")
            continue
        for key, value in section.items():
            if key == "url" and isinstance(value, str):
                value = redact_url(value)
            lines.append(f"  {name}.{key} = {value!r}")
    if status.trusted:
        return ["settings that apply:", *(lines or ["  (none)"])]
    out = ["settings that will apply:", *(lines or ["  (none)"])]
    off = restrictions(root, config)
    if off:
        out += ["off until you trust it:", *(f"  {line}" for line in off)]
    if status.changed:
        out.append(f"changed since you trusted it: {', '.join(status.changed)}")
    return out


# ------------------------------------------------------------------ the trust store


# trust file path -> (its (dev, inode, mtime_ns, size), the entries parsed from it)
_PARSED: dict[str, tuple[tuple[int, int, int, int], dict[str, TrustEntry]]] = {}


def _now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _identity(root: Path) -> tuple[int, int]:
    st = os.stat(root)
    return st.st_dev, st.st_ino


class TrustStore:
    """The user's trusted folders: one JSON file in their config dir."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else config_home()

    @property
    def path(self) -> Path:
        return self.folder / TRUST_FILE

    # -- reading ------------------------------------------------------------------------------

    def _check_folder(self) -> None:
        try:
            st = os.stat(self.folder)
        except FileNotFoundError:
            return
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise TrustStoreError(
                TRUST_STORE_UNSAFE,
                f"{self.folder}: not owned by you or writable by others; trusted folders "
                "are not read from it",
            )

    def entries(self) -> list[TrustEntry]:
        """Every trusted folder; raises `TrustStoreError` if the file is unsafe or bad."""
        self._check_folder()
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            _PARSED.pop(str(self.path), None)
            return []
        except OSError as exc:  # ELOOP: a symlink in its place
            raise TrustStoreError(
                TRUST_STORE_UNSAFE, f"{self.path}: not a regular file of yours ({exc.strerror})"
            ) from exc
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
                raise TrustStoreError(
                    TRUST_STORE_UNSAFE,
                    f"{self.path}: must be a regular file owned by you, not writable by others",
                )
            if st.st_size > MAX_TRUST_FILE_BYTES:
                raise TrustStoreError(TRUST_STORE_CORRUPT, f"{self.path}: too large")
            # Every Workspace.open asks (a hub: every request): parse a version once.
            version = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
            cached = _PARSED.get(str(self.path))
            if cached is not None and cached[0] == version:
                return list(cached[1].values())
            data = fh.read()
        entries = self._parse(data)
        _PARSED[str(self.path)] = (version, {e.path: e for e in entries})
        return entries

    def entry(self, root: Path) -> TrustEntry | None:
        """The entry for ``root`` (resolved), if trusted; raises like `entries`."""
        self.entries()
        cached = _PARSED.get(str(self.path))
        return None if cached is None else cached[1].get(str(root))

    def _parse(self, data: bytes) -> list[TrustEntry]:
        try:
            raw = json.loads(data.decode("utf-8"))
            if not isinstance(raw, dict) or raw.get("format") != FORMAT:
                raise ValueError(f"not format {FORMAT}")
            folders = raw.get("folders")
            if not isinstance(folders, list):
                raise ValueError("folders is not a list")
            return [TrustEntry.from_json(item) for item in folders]
        except (UnicodeDecodeError, ValueError) as exc:
            raise TrustStoreError(TRUST_STORE_CORRUPT, f"{self.path}: {exc}") from exc

    def status(self, root: Path, config: Mapping[str, Any]) -> TrustStatus:
        """Whether ``root`` (a resolved folder) with ``config`` is trusted now."""
        try:
            entry = self.entry(root)
        except TrustStoreError as exc:
            return TrustStatus(TrustState.UNTRUSTED, str(exc), problem=exc.code)
        if entry is None:
            return TrustStatus.untrusted(f"not trusted: run `{TRUST_COMMAND} {root}`")
        try:
            identity = _identity(root)
        except OSError:
            return TrustStatus.untrusted("the folder cannot be examined")
        if identity != (entry.device, entry.inode):
            return TrustStatus.untrusted(
                f"the folder you trusted at this path was replaced by another one: run "
                f"`{TRUST_COMMAND} {root}` if you trust this one"
            )
        if settings_sha256(config) != entry.settings_sha256:
            changed = changed_keys(entry.keys, key_hashes(config))
            return TrustStatus(
                TrustState.CHANGED,
                f"settings changed since you trusted it ({', '.join(changed) or 'values'}): "
                f"run `{TRUST_COMMAND} {root}` to trust them",
                changed,
            )
        return TrustStatus(TrustState.TRUSTED, "trusted")

    # -- writing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._check_folder()
        lock = os.open(
            self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    def _write(self, entries: list[TrustEntry]) -> None:
        body = {"format": FORMAT, "folders": [e.to_json() for e in entries]}
        data = (json.dumps(body, indent=2, sort_keys=True) + "\n").encode("utf-8")
        tmp = self.folder / f".{TRUST_FILE}.{os.getpid()}.{secrets.token_hex(6)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)  # replaces a symlink itself, never writes through it
        finally:
            tmp.unlink(missing_ok=True)
        dir_fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def trust(self, root: Path, config: Mapping[str, Any]) -> TrustEntry:
        """Trust ``root`` (resolved) with exactly these settings; replaces an older entry."""
        device, inode = _identity(root)
        entry = TrustEntry(
            str(root), device, inode, settings_sha256(config), key_hashes(config), _now()
        )
        with self._locked():
            kept = [e for e in self.entries() if e.path != entry.path]
            self._write([*kept, entry])
        return entry

    def untrust(self, root: Path) -> bool:
        """Forget ``root``; False if it was not trusted."""
        with self._locked():
            entries = self.entries()
            kept = [e for e in entries if e.path != str(root)]
            if len(kept) == len(entries):
                return False
            self._write(kept)
        return True
