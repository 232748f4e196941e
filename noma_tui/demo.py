"""The demo workspace: shipped read-only in the package, opened as a writable copy.

``noma-tui`` with no argument copies ``noma_tui/demo_workspace`` to
``$XDG_DATA_HOME/noma-workbench/demo`` (``~/.local/share/...`` when unset) the first time,
then opens that copy every time after, so a newcomer's edits and transcript records
persist and the installed package is never written to.

The product made the copy from its own package, so the copy is trusted (`core.trust`: its
gates are on so the demo flows run) for as long as its covered settings are still the
packaged ones; a copy moved elsewhere, or edited, is asked about like any other folder.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
from pathlib import Path

from core.trust import TrustStore, settings_sha256
from core.workspace import CONFIG_NAME, Workspace

# Package data, found through importlib.resources so an installed wheel finds it too.
DEMO_SOURCE = Path(str(importlib.resources.files("noma_tui") / "demo_workspace"))
SKIP = shutil.ignore_patterns("__init__.py", "__pycache__", "*.pyc", ".noma-workbench")


def data_home() -> Path:
    value = os.environ.get("XDG_DATA_HOME", "").strip()
    if value and Path(value).is_absolute():
        return Path(value)
    return Path.home() / ".local" / "share"


def demo_copy_dir() -> Path:
    return data_home() / "noma-workbench" / "demo"


def ensure_demo_copy(target: Path | None = None) -> Path:
    """The writable demo workspace, copied from the package on first use."""
    target = target if target is not None else demo_copy_dir()
    if not (target / CONFIG_NAME).is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(DEMO_SOURCE, target, ignore=SKIP, dirs_exist_ok=True)
    _trust_if_packaged(target)
    return target


def _trust_if_packaged(target: Path) -> None:
    """Trust the copy while its covered settings are exactly the packaged demo's."""
    packaged = Workspace.open(DEMO_SOURCE)
    copy = Workspace.open(target)
    if copy.trusted or settings_sha256(copy.config) != settings_sha256(packaged.config):
        return
    try:
        TrustStore().trust(copy.root, copy.config)
    except OSError:  # an unusable trust store: the demo opens restricted and says why
        return
