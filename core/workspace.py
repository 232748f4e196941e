"""A workspace: a folder of ``.noma`` documents plus ``flows/``, ``skills/``, a state dir
and ``noma-workbench.toml``.

Every surface opens the same `Workspace`, so the CLI, the app and the servers agree on where
documents, flows, skills and run state live. Sections of the config are read by the parts
that own them (``[gates]``/``[policy]`` by ``core.flow``); unknown keys are kept, not lost.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .noma.bounded import load_toml_bounded

CONFIG_NAME = "noma-workbench.toml"
STATE_DIR = ".noma-workbench"


class WorkspaceError(Exception):
    """The folder is missing or its config cannot be read."""


@dataclass(slots=True)
class Workspace:
    root: Path
    config: dict[str, Any] = field(default_factory=dict)

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
        return cls(path, config)

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def state_dir(self) -> Path:
        """Run store, blobs and sandbox scratch; created on first use."""
        path = self.root / STATE_DIR
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    @property
    def flows_dir(self) -> Path:
        return self.root / "flows"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    def section(self, name: str) -> dict[str, Any]:
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
