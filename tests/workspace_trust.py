"""Trust a test's workspace folder the way the user does: through the real trust store.

`tests/conftest.py` gives every test its own ``XDG_CONFIG_HOME``, so what a test trusts is
its own. Call `trust_folder` after writing the folder's ``noma-workbench.toml`` (trust binds
the settings as they are then; a later edit of a covered section untrusts the folder again,
as it would for a user). There is no switch that trusts everything.
"""

from __future__ import annotations

from pathlib import Path

from core.trust import TrustStore
from core.workspace import Workspace


def trust_folder(root: Path) -> Path:
    """Record ``root`` (with its current settings) as trusted; returns its resolved path."""
    workspace = Workspace.open(root)
    TrustStore().trust(workspace.root, workspace.config)
    return workspace.root
