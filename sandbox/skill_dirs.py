"""Open a run's skill directories on the server, refusing any symlink on the way.

The skill registry resolves a skill's folder once, when it loads the skill; the run
starts later. Whoever controls the workspace can swap the folder (or any directory above
it) for a symlink in between, and the root launcher that copies the skill into the
sandbox would then copy whatever the link names (host files no run should see). So the
folder is opened here one component at a time from ``/`` with ``O_NOFOLLOW``, and the
sandbox copies from that descriptor: what was checked is what is copied.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sandbox.job import SkillMount

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# The kernel passes at most 253 descriptors in one SCM_RIGHTS message.
MAX_SKILLS_PER_RUN = 250


class UnsafeSkillPath(OSError):
    """A skill folder is missing, not absolute, or crosses a symlink."""


def open_skill_dir(path: Path) -> int:
    """A read fd of the directory ``path`` (absolute), reached without crossing a symlink."""
    if not path.is_absolute():
        raise UnsafeSkillPath(f"skill folder {str(path)!r} is not an absolute path")
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in path.parts[1:]:
            if part in (".", ".."):
                raise UnsafeSkillPath(f"skill folder {str(path)!r} is not a normalised path")
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise UnsafeSkillPath(_why(path, part, exc)) from None
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_skill_dirs(mounts: Sequence[SkillMount]) -> list[int]:
    """One fd per mount, in order; on any failure none stays open."""
    if len(mounts) > MAX_SKILLS_PER_RUN:
        raise UnsafeSkillPath(f"a run can mount at most {MAX_SKILLS_PER_RUN} skills")
    fds: list[int] = []
    try:
        for m in mounts:
            fds.append(open_skill_dir(m.path))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def _why(path: Path, part: str, exc: OSError) -> str:
    if exc.errno in (40, 20):  # ELOOP, ENOTDIR
        return f"skill folder {str(path)!r} crosses a symlink or a non-directory at {part!r}"
    if exc.errno == 2:
        return f"skill folder {str(path)!r} does not exist"
    return f"skill folder {str(path)!r} cannot be opened: {exc.strerror}"
