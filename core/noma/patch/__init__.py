"""The patch engine: 25 source-preserving ops, atomic op lists, preconditions."""

from .engine import (
    ListFailure,
    OpStep,
    apply_list,
    apply_one,
    apply_ops_to_bytes,
    apply_ops_to_text,
)
from .errors import PATCH_ERROR_CODES, PatchError
from .ops_catalog import ALL_OPS, CORE_OPS

__all__ = [
    "ALL_OPS",
    "CORE_OPS",
    "PATCH_ERROR_CODES",
    "ListFailure",
    "OpStep",
    "PatchError",
    "apply_list",
    "apply_one",
    "apply_ops_to_bytes",
    "apply_ops_to_text",
]
