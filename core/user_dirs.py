"""The user's own directories (XDG base dirs): what the product trusts besides itself.

A workspace folder is untrusted input; the user's config and state dirs are not. Trusted
folders live in the config dir, secrets-bearing state that must never come with a folder
(hub tokens) in the state dir. A relative ``XDG_*`` value is ignored, as the spec says.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_DIR = "noma-workbench"


def _base(variable: str, default: tuple[str, ...]) -> Path:
    value = os.environ.get(variable, "").strip()
    if value and Path(value).is_absolute():
        return Path(value)
    return Path.home().joinpath(*default)


def config_home() -> Path:
    """``$XDG_CONFIG_HOME/noma-workbench`` (default ``~/.config/noma-workbench``)."""
    return _base("XDG_CONFIG_HOME", (".config",)) / APP_DIR


def state_home() -> Path:
    """``$XDG_STATE_HOME/noma-workbench`` (default ``~/.local/state/noma-workbench``)."""
    return _base("XDG_STATE_HOME", (".local", "state")) / APP_DIR
