"""A workspace: a folder of ``.noma`` documents plus ``flows/``, ``skills/``, a state dir
and ``noma-workbench.toml``.

Every surface opens the same `Workspace`, so the CLI, the app and the servers agree on where
documents, flows, skills and run state live. Sections of the config are read by the parts
that own them (``[gates]``/``[policy]`` by ``core.flow``); unknown keys are kept, not lost.

The folder is untrusted input (`core.trust`): `section` is the one place the effective
settings come from, and it answers an empty table for every section trust covers until the
user has trusted the folder with exactly those settings. `raw_section` is what the folder
says, for showing it (never for using it).
"""

from __future__ import annotations

import getpass
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .noma.boundary import STATE_DIR_REFUSED, BoundaryError, owned_directory, state_file
from .noma.bounded import load_toml_bounded
from .noma.visible import visible_line
from .trust import COVERED, TrustStatus, TrustStore

WORKSPACE_UNTRUSTED = "workspace_untrusted"
CONFIG_NAME = "noma-workbench.toml"
STATE_DIR = ".noma-workbench"


class WorkspaceError(Exception):
    """The folder is missing or its config cannot be read."""


class StateDirError(WorkspaceError, BoundaryError):
    """``.noma-workbench/`` (or a folder or store file in it) is a symlink, not what it
    should be, or someone else's: refused (code ``state_dir_refused``), never followed.
    Both a `WorkspaceError` and an `OSError`, so every surface already reports it."""


def state_directory(root: Path, *sub: str, create: bool = True) -> Path:
    """``root/.noma-workbench[/sub...]``, each level created 0700 where missing and
    refused (`StateDirError`) when it is a symlink, not a directory or not this user's
    (``create=False``: the sub-folders are only checked where they exist):
    a cloned ``.noma-workbench -> ~/somewhere`` would put keys and databases there."""
    path = root / STATE_DIR
    try:
        owned_directory(path)
        for name in sub:
            path = path / name
            if create or os.path.lexists(path):
                owned_directory(path)
    except BoundaryError as exc:
        raise StateDirError(STATE_DIR_REFUSED, exc.message) from exc
    return path


def state_store_file(path: Path) -> Path:
    """A store file in a state folder that SQLite opens by path: refused (`StateDirError`)
    when it or a journal beside it is a symlink or not a regular file."""
    try:
        return state_file(path)
    except BoundaryError as exc:
        raise StateDirError(STATE_DIR_REFUSED, exc.message) from exc


@dataclass(slots=True)
class Workspace:
    root: Path
    config: dict[str, Any] = field(default_factory=dict)
    # Fail closed: a Workspace built by hand is untrusted; `open` asks the trust store.
    trust: TrustStatus = field(default_factory=TrustStatus.untrusted)

    @classmethod
    def open(cls, root: str | Path) -> Workspace:
        path = Path(root).expanduser().resolve()
        if not path.is_dir():
            raise WorkspaceError(f"{path}: not a folder")
        config_path = path / CONFIG_NAME
        config: dict[str, Any] = {}
        if config_path.is_file():
            try:
                config = load_toml_bounded(config_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: not TOML,
                # or beyond the bounds on structured text (`core.noma.bounded`)
                raise WorkspaceError(f"{config_path}: {exc}") from exc
        return cls(path, config, TrustStore().status(path, config))

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def state_dir(self) -> Path:
        """Run store, blobs and sandbox scratch; created on first use, refused
        (`StateDirError`) when it is a symlink, not a directory or not this user's."""
        return state_directory(self.root)

    @property
    def flows_dir(self) -> Path:
        return self.root / "flows"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def trusted(self) -> bool:
        return self.trust.trusted

    def section(self, name: str) -> dict[str, Any]:
        """The effective ``[name]`` table: empty for a covered section of an untrusted folder."""
        if name in COVERED and not self.trust.trusted:
            return {}
        return self.raw_section(name)

    def raw_section(self, name: str) -> dict[str, Any]:
        """What the folder's config says, trusted or not: for display only."""
        value = self.config.get(name)
        return value if isinstance(value, dict) else {}

    @property
    def actor_name(self) -> str:
        name = self.section("workbench").get("actor")
        if isinstance(name, str) and name:
            return name
        try:
            return getpass.getuser()
        except (KeyError, OSError):
            return "unknown"

    def documents(self) -> list[Path]:
        """Every ``.noma`` file under the root (not in the state dir), sorted by path."""
        out = []
        for path in self.root.rglob("*.noma"):
            rel = path.relative_to(self.root)
            if rel.parts and rel.parts[0] == STATE_DIR:
                continue
            if path.is_file():
                out.append(path)
        return sorted(out, key=lambda p: p.relative_to(self.root).as_posix())

    def contains(self, path: str | Path) -> bool:
        """Paths stay inside their root: symlinks and ``..`` are resolved first."""
        return Path(path).resolve().is_relative_to(self.root)


def trust_command(root: Path) -> str:
    """The command that trusts ``root``, safe to print and to paste into a shell."""
    return f"noma trust {shlex.quote(visible_line(str(root)))}"


def untrusted_refusal(workspace: Workspace) -> str | None:
    """Why a server will not serve this folder (it would run its skills), else None."""
    if workspace.trusted:
        return None
    return (
        f"{WORKSPACE_UNTRUSTED}: {visible_line(str(workspace.root))} is not trusted "
        f"({visible_line(workspace.trust.reason)}); nothing is served from it. Trust it first: "
        f"{trust_command(workspace.root)}"
    )
