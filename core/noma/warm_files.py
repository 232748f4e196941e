"""What a long-lived engine remembers of a document file between two calls: its stat, its
bytes and their sha256, so an unchanged file costs one ``lstat``, not a read and a hash.

The danger is an outside edit the stat does not show. Every change to a file's data or
times sets its ``ctime`` to the clock's time (no user call can set ``ctime``; ``touch -d``
moves ``mtime`` but sets ``ctime`` to now), and replacing the file by rename changes its
inode. What the stat cannot tell apart is a change made within the same tick of the
filesystem's clock as the ``ctime`` recorded. So a stat is *trusted* only when it was taken
once that tick was over: the clock (``CLOCK_REALTIME_COARSE``, the one the kernel stamps
files with) had moved to a later granule than the recorded ``ctime`` before the bytes were
read. Then any later change carries a later ``ctime`` and the stat shows it. A stat that is
not trusted is *in doubt*: the next call reads the bytes and compares their sha256 (the
decoded text is reused when they match).

After our own write the bytes are known without reading them; the stat taken once the
commit is done is trusted only when the name still holds our inode with our size and the
``mtime`` our write left, the rename's ``ctime`` is not later than the rename's tick, and
the tick is over. What stays unseen is an outside writer that changes the file in place
*and* restores its ``mtime`` within the very tick our rename lands in, or a clock stepped
backwards; a filesystem whose clock is another machine's (NFS) can break the argument too.

The granule is read off the timestamps themselves (the largest power of ten that divides
them, two seconds for whole seconds): a filesystem that keeps whole seconds makes every
stat taken within that second doubtful, which costs a hash, never a missed edit.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .boundary import Place, read_all
from .source import Source, decode

# How each read was served ("stat": unchanged, nothing read; "hash": read and hashed, the
# bytes were the ones kept; "read": read, hashed and decoded): read by tests and benches.
READS: Counter[str] = Counter()

_CLOCK = getattr(time, "CLOCK_REALTIME_COARSE", time.CLOCK_REALTIME)
_SECOND = 1_000_000_000


def coarse_now() -> int:
    """The clock file timestamps are taken from (Linux: the coarse realtime clock, which
    may lag the precise one by a tick), in nanoseconds."""
    return time.clock_gettime_ns(_CLOCK)


def granule(ns: int) -> int:
    """The coarsest timestamp granularity ``ns`` is consistent with (over-estimating it
    only makes more stats doubtful)."""
    if ns % _SECOND == 0:
        return 2 * _SECOND  # whole seconds, or FAT's two
    g = 1
    while ns % (g * 10) == 0:
        g *= 10
    return g


def settled(ns: int, clock: int) -> bool:
    """Will every change made from time ``clock`` on carry a timestamp later than ``ns``?
    Yes when ``clock`` is already in a later granule than ``ns``."""
    g = granule(ns)
    return (clock // g) * g > ns


@dataclass(frozen=True, slots=True)
class Stamp:
    """The stat fields that change when a file is edited or replaced."""

    size: int
    mtime_ns: int
    ino: int
    dev: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Stamp:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_ctime_ns)


@dataclass(frozen=True, slots=True)
class Written:
    """What a commit knows of the file it renamed into place (`core.noma.commit`): its
    inode and ``mtime`` right after the data was synced, and the clock around the rename."""

    ino: int
    dev: int
    size: int
    mtime_ns: int
    before_rename: int
    after_rename: int


@dataclass(slots=True)
class WarmFile:
    stamp: Stamp
    trusted: bool
    source: Source
    sha256: str


class WarmFiles:
    """The last known bytes of each document file, keyed by the path it was reached by."""

    def __init__(self) -> None:
        self._files: dict[str, WarmFile] = {}

    def read(self, where: Place, shown: Path) -> tuple[Source, str] | None:
        """The file's content and sha256: from memory when its stat is trusted and
        unchanged, else read (one read, one hash). None when there is no such file.
        Boundary refusals (a symlink, not a regular file) raise as the read would."""
        key = str(shown)
        known = self._files.get(key)
        if known is not None and known.trusted:
            st = where.folder.check_file(where.name)
            if st is None:
                self._files.pop(key, None)
                return None
            if Stamp.of(st) == known.stamp:
                READS["stat"] += 1
                return known.source, known.sha256
        clock = coarse_now()
        try:
            fd = where.folder.open_file(where.name, os.O_RDONLY)
        except FileNotFoundError:
            self._files.pop(key, None)
            return None
        try:
            raw = read_all(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        sha = hashlib.sha256(raw).hexdigest()
        if known is not None and known.sha256 == sha:
            READS["hash"] += 1
            source = known.source
        else:
            READS["read"] += 1
            source = decode(raw)
        trusted = settled(st.st_ctime_ns, clock) and len(raw) == st.st_size
        self._files[key] = WarmFile(Stamp.of(st), trusted, source, sha)
        return source, sha

    def wrote(
        self, where: Place, shown: Path, source: Source, sha256: str, written: Written | None
    ) -> None:
        """Remember the bytes just committed to ``where`` (``written``: what the commit
        saw; None when it did not say, so the next read verifies by hash)."""
        key = str(shown)
        try:
            st = where.folder.lstat(where.name)
        except OSError:
            st = None
        if st is None:
            self._files.pop(key, None)
            return
        now = coarse_now()
        trusted = (
            written is not None
            and st.st_ino == written.ino
            and st.st_dev == written.dev
            and st.st_size == written.size
            and st.st_mtime_ns == written.mtime_ns
            and settled(written.mtime_ns, written.before_rename)
            and st.st_ctime_ns <= _granule_end(st.st_ctime_ns, written.after_rename)
            and settled(st.st_ctime_ns, now)
        )
        self._files[key] = WarmFile(Stamp.of(st), trusted, source, sha256)

    def forget(self, shown: Path) -> None:
        self._files.pop(str(shown), None)


def _granule_end(ns: int, clock: int) -> int:
    """The last timestamp of the granule ``clock`` falls in (granule read off ``ns``): a
    ``ctime`` past it was set by a change after ``clock``'s tick."""
    g = granule(ns)
    return (clock // g) * g + g - 1
