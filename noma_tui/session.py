"""An open edit: what it targets and which versions it was prepared against.

The two hashes are the concurrency contract of §3.4. ``base_sha256`` (the whole file when
the edit opened) makes the engine record ``base_sha_drift`` if the file moved on;
``base_hash`` (the target block's source hash) makes it refuse the op with
``sha_mismatch`` if that block itself changed. ``drift`` is what the editor and the status
bar show live while the edit is open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .document import LoadedDocument
from .ops import with_base_hash


@dataclass(eq=False, slots=True)
class EditSession:
    action: str  # the op it sends, e.g. "replace_body"
    target: str  # the canonical id the op's precondition applies to
    base_sha256: str
    base_hash: str | None
    drift: bool = False

    @classmethod
    def open(cls, action: str, loaded: LoadedDocument, block: int) -> EditSession:
        target = loaded.blocks[block].id or ""
        return cls(action, target, loaded.sha256, loaded.block_hash(block))

    def stamp(self, op: dict[str, Any]) -> dict[str, Any]:
        return with_base_hash(op, self.base_hash)

    def observe(self, loaded: LoadedDocument, own_write: str | None = None) -> bool:
        """Track the file on disk; returns True when the drift flag changed.

        Drift is a fact about someone else: bytes that differ both from this edit's base
        and from ``own_write``, the app's own last write of the file (the version an apply
        of this edit produced is not "changed on disk since the edit opened")."""
        drift = loaded.sha256 not in (self.base_sha256, own_write)
        changed = drift != self.drift
        self.drift = drift
        return changed

    def current_block(self, loaded: LoadedDocument) -> int | None:
        return loaded.block_of_id(self.target) if self.target else None

    def rebase(self, loaded: LoadedDocument, *, keep_file_base: bool = False) -> bool:
        """Take the block as it is now as the new base. ``keep_file_base`` keeps the old
        file hash, so applying still records the drift honestly ("keep editing").

        Returns False when the target block no longer exists.
        """
        block = self.current_block(loaded)
        if block is None:
            return False
        self.base_hash = loaded.block_hash(block)
        if not keep_file_base:
            self.base_sha256 = loaded.sha256
        self.observe(loaded)
        return True
