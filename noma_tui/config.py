"""How the app runs: settings from ``[workbench]`` in ``noma-workbench.toml`` and the
command line (the command line wins).

Tests and screenshots turn the watcher and cursor blink off here, and pin the theme, so a
run renders the same every time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.workspace import Workspace
from themes import DEFAULT_THEME


@dataclass(slots=True)
class WorkbenchConfig:
    theme: str = DEFAULT_THEME
    watch: bool = True
    cursor_blink: bool = True
    keymap: dict[str, str] = field(default_factory=dict)
    open: str | None = None  # document opened first, relative to the workspace
    actor: str | None = None  # overrides the workspace's actor name

    @classmethod
    def from_workspace(cls, workspace: Workspace, **overrides: Any) -> WorkbenchConfig:
        section = workspace.section("workbench")
        config = cls()
        theme = section.get("theme")
        if isinstance(theme, str) and theme:
            config.theme = theme
        keymap = section.get("keymap")
        if isinstance(keymap, dict):
            config.keymap = {str(k): str(v) for k, v in keymap.items() if isinstance(v, str)}
        first = section.get("open")
        if isinstance(first, str) and first:
            config.open = first
        for key, value in overrides.items():
            if value is not None:
                setattr(config, key, value)
        return config
