"""Editing a block in the user's own editor (``ctrl+e``).

The block's whole source goes to a private temp file (never into the workspace); the app
suspends, runs ``$VISUAL`` or ``$EDITOR`` (``vi`` if neither is set) on it, and resumes.
What comes back goes through the proof like any edit: ``replace_body`` when only the lines
between the fences changed, else ``replace_block``, with the block hash taken before the
editor opened, so a change made meanwhile is refused with ``sha_mismatch``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from textual.app import App, SuspendNotSupported

from . import ops


def editor_command() -> list[str]:
    raw = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return shlex.split(raw)


def run_external_editor(app: App[Any], text: str, ident: str) -> str | None:
    """The edited text, or None (after telling the user) if the editor failed."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in ident)[:40] or "block"
    with tempfile.TemporaryDirectory(prefix="noma-edit-") as folder:
        path = Path(folder) / f"{safe}.noma"
        path.write_text(text, encoding="utf-8")
        command = [*editor_command(), str(path)]
        try:
            try:
                with app.suspend():
                    result = subprocess.run(command, check=False)
            except SuspendNotSupported:  # headless (tests): no terminal to hand over
                result = subprocess.run(command, check=False, stdin=subprocess.DEVNULL)
        except OSError as exc:
            app.notify(f"{command[0]}: {exc.strerror or exc}", title="$EDITOR",
                       severity="error")  # fmt: skip
            return None
        if result.returncode != 0:
            app.notify(f"{command[0]} exited with {result.returncode}; nothing applied.",
                       title="$EDITOR", severity="warning")  # fmt: skip
            return None
        return path.read_text(encoding="utf-8", errors="surrogateescape")


def external_op(ident: str, before: str, after: str) -> dict[str, Any]:
    """``replace_body`` when the opener and closing fence are unchanged, else
    ``replace_block``."""
    old, new = before.rstrip("\n").split("\n"), after.rstrip("\n").split("\n")
    if len(old) >= 2 and len(new) >= 2 and old[0] == new[0] and old[-1] == new[-1]:
        return ops.replace_body(ident, "\n".join(new[1:-1]))
    return ops.replace_block(ident, after)
