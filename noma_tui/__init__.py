"""Noma Workbench: the Textual app over the `core` engine.

Panes render records that `core` computes (AST, diagnostics, proofs, transcript lines);
every edit is a patch op sent through `core.noma.patch.pipeline.patch_file` with a human
actor, so the app never writes a document byte itself.
"""

from __future__ import annotations

__all__ = ["__version__"]

from core import __version__
