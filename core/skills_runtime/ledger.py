"""What created skills cost against the workspace's quotas, and the refusal when they don't fit.

Skills an agent creates over ``create_skill`` are stored bytes like blobs, so they count in
the same per-workspace ledger, under the same lock (the blob store's, see `BlobStore`): the
workspace quota (``[skills] blob_quota_bytes``) caps blobs and created skills together, and
created skills alone are capped too (``[skills] created_skills_quota_bytes``, default
64 MiB, or ``NOMA_CREATED_SKILLS_QUOTA_BYTES``). ``[skills]`` is a trust-covered section:
an untrusted folder gets the defaults, so it cannot raise its own cap.

A skill costs its file bytes plus one block (`ENTRY_COST`) for every file and folder it
makes: a flood of empty files is not free, as inodes and blocks are what it really uses.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_CREATED_SKILLS_QUOTA_BYTES = 64 * 1024 * 1024
CREATED_SKILLS_QUOTA_ENV = "NOMA_CREATED_SKILLS_QUOTA_BYTES"
ENTRY_COST = 4096
STAGING_PREFIX = ".creating-"


def created_skills_quota_from(section: Mapping[str, Any], environ: Mapping[str, str]) -> int:
    """The cap from the environment, else ``[skills] created_skills_quota_bytes``, else 64 MiB."""
    raw: Any = environ.get(CREATED_SKILLS_QUOTA_ENV) or section.get(
        "created_skills_quota_bytes", DEFAULT_CREATED_SKILLS_QUOTA_BYTES
    )
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = -1
    if isinstance(raw, bool) or value < 0:
        raise ValueError(
            "created skills quota must be a whole number of bytes >= 0 "
            f"({CREATED_SKILLS_QUOTA_ENV} or [skills] created_skills_quota_bytes), not {raw!r}"
        )
    return value


class SkillQuotaExceeded(Exception):
    """Storing a created skill of ``requested`` bytes would pass ``setting``'s quota."""

    def __init__(self, requested: int, used: int, quota: int, setting: str) -> None:
        super().__init__(
            f"this skill needs {requested} bytes and only {max(0, quota - used)} of "
            f"{quota} are left ([skills] {setting}). Delete blobs or created skills you no "
            "longer need or ask the operator to raise it."
        )
        self.requested = requested
        self.used = used
        self.quota = quota
        self.setting = setting

    def details(self) -> dict[str, Any]:
        return {
            "requested_bytes": self.requested,
            "used_bytes": self.used,
            "quota_bytes": self.quota,
            "quota": self.setting,
        }


def tree_cost(path: Path) -> int:
    """What ``path`` (a file, or a folder and everything in it) costs: bytes plus one
    `ENTRY_COST` per entry. Symbolic links are counted as entries and never followed; the
    walk keeps its own stack (a hostile clone nests deeper than Python's recursion limit)
    and skips what it cannot read."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    total = ENTRY_COST + (st.st_size if stat.S_ISREG(st.st_mode) else 0)
    stack = [str(path)] if stat.S_ISDIR(st.st_mode) else []
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += ENTRY_COST
                    if stat.S_ISREG(info.st_mode):
                        total += info.st_size
                    elif stat.S_ISDIR(info.st_mode):
                        stack.append(entry.path)
        except OSError:
            continue
    return total
