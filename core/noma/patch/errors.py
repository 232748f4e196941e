"""Patch errors: the §3.5 taxonomy, plus ``invalid_op`` for ops that break the wire schema."""

from __future__ import annotations

TARGET_MISSING = "target_missing"
PARENT_MISSING = "parent_missing"
ID_CONFLICT = "id_conflict"
INVALID_CONTENT = "invalid_content"
ID_ATTRIBUTE_PROTECTED = "id_attribute_protected"
SHA_MISMATCH = "sha_mismatch"
PRE_VALIDATION_BLOCKED = "pre_validation_blocked"
OP_LIST_ABORTED = "op_list_aborted"
UNSUPPORTED_OP = "unsupported_op"
# Extension (§3.5 allows additive codes): a field is missing, mistyped or unknown, so the op
# does not match ``patch-op.schema.json``. Readers tolerate unknown codes (§1.3).
INVALID_OP = "invalid_op"

PATCH_ERROR_CODES = frozenset(
    {
        TARGET_MISSING,
        PARENT_MISSING,
        ID_CONFLICT,
        INVALID_CONTENT,
        ID_ATTRIBUTE_PROTECTED,
        SHA_MISMATCH,
        PRE_VALIDATION_BLOCKED,
        OP_LIST_ABORTED,
        UNSUPPORTED_OP,
        INVALID_OP,
    }
)


class PatchError(Exception):
    """A rejected op: ``code`` is machine-readable, the message is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"PatchError({self.code!r}, {self.message!r})"
