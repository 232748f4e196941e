"""Fault points: named places on the write path where a test can kill or fail the process.

The write-ahead commit (`core.noma.commit`) promises that a crash at any instant leaves the
old document with no record of the op, or the new document with its record, once the
document is next touched. Timing-based kills cannot prove "any instant", so every step of
the write path calls `fault` with its name, and a test chooses one:

- ``NOMA_FAULT_POINT=<name>`` sends SIGKILL to this process at that point (a real crash:
  no ``finally`` block, no flush, no cleanup runs);
- ``NOMA_FAULT_POINT=<name>:raise`` raises `InjectedFault` there instead (in-process tests;
  cleanup code does run, as it would for an ordinary error).

With the variable unset this is one dictionary lookup per point.
"""

from __future__ import annotations

import os
import signal

ENV = "NOMA_FAULT_POINT"

# Every point, in write-path order, so tests can iterate them and a typo is caught.
POINTS = (
    "pending.written",  # the pending record is on disk (not yet fsynced)
    "pending.synced",  # the pending record is durable
    "tmp.written",  # the new document's temp file is written and fsynced
    "dir.synced.before",  # the directory entry of both is durable
    "renamed",  # the new document replaced the old one
    "dir.synced",  # the rename is durable
    "append.torn",  # half of the transcript lines are written
    "appended",  # the records are appended and fsynced
    "pending.removed",  # the commit is complete
)


class InjectedFault(RuntimeError):
    """Raised at a fault point chosen with ``<name>:raise``."""


def fault(point: str) -> None:
    """Kill or fail here when a test asked for this point; otherwise do nothing."""
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    name, _, mode = wanted.partition(":")
    if name != point:
        return
    if mode == "raise":
        raise InjectedFault(f"injected fault at {point}")
    os.kill(os.getpid(), signal.SIGKILL)
