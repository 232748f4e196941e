"""How the app runs: settings from ``[workbench]`` in ``noma-workbench.toml`` and the
command line (the command line wins).

A pydantic model, so a typo is reported rather than silently ignored: a keymap entry whose
binding id does not exist, or a value of the wrong type, is listed in `problems` and the
app shows them at start (the rest of the settings still apply). Tests and screenshots turn
the watcher and cursor blink off here, and pin the theme, so a run renders the same every
time.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.workspace import Workspace
from themes import DEFAULT_THEME

KNOWN_SETTINGS = frozenset({"theme", "keymap", "open", "actor", "watch", "cursor_blink"})
# Keys a folder's own config may not move: trusting the folder is the user's act, so a
# cloned `[workbench.keymap]` cannot put it under a key the user presses for something else.
FIXED_BINDINGS = frozenset({"app.trust"})


def binding_ids() -> frozenset[str]:
    """Every binding id a keymap may name: the action registry and the dialogs' keys."""
    from .keys import BY_ID

    # The trust question's own keys are not a folder's to move (like app.trust).
    return frozenset(BY_ID) - {"trust.yes", "trust.no"}


class WorkbenchConfig(BaseModel):
    model_config = ConfigDict(validate_assignment=False, extra="forbid")

    theme: str = DEFAULT_THEME
    watch: bool = True
    cursor_blink: bool = True
    keymap: dict[str, str] = Field(default_factory=dict)
    open: str | None = None  # document opened first, relative to the workspace
    actor: str | None = None  # overrides the workspace's actor name
    problems: list[str] = Field(default_factory=list)  # what was ignored, and why

    @classmethod
    def from_workspace(cls, workspace: Workspace, **overrides: Any) -> WorkbenchConfig:
        section = workspace.section("workbench")
        problems: list[str] = []
        values: dict[str, Any] = {}
        for key, value in section.items():
            if key not in KNOWN_SETTINGS:
                problems.append(f"[workbench] {key}: unknown setting (ignored)")
                continue
            try:
                cls.model_validate({key: value})
            except ValidationError as exc:
                reason = exc.errors()[0].get("msg", "invalid")
                problems.append(f"[workbench] {key}: {reason} (ignored)")
                continue
            values[key] = value
        keymap = values.get("keymap") or {}
        known = binding_ids()
        for ident in sorted(keymap):
            if ident in FIXED_BINDINGS:
                problems.append(
                    f"[workbench.keymap] {ident}: cannot be remapped by a folder's config (ignored)"
                )
            elif ident not in known:
                problems.append(
                    f"[workbench.keymap] {ident}: no such binding id (see F1 for the ids)"
                )
        values["keymap"] = {
            k: v for k, v in keymap.items() if k in known and k not in FIXED_BINDINGS
        }
        config = cls.model_validate(values)
        config.problems = problems
        for key, value in overrides.items():
            if value is not None:
                setattr(config, key, value)
        return config
