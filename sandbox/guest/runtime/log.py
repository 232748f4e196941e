"""Run logging: lines land in the run's logs, whose first and last KB become ``logs_preview``."""

from __future__ import annotations

import sys

__all__ = ["error", "info", "warning"]


def _emit(level: str, msg: object) -> None:
    sys.stderr.write(f"[{level}] {msg}\n")
    sys.stderr.flush()


def info(msg: object) -> None:
    _emit("info", msg)


def warning(msg: object) -> None:
    _emit("warning", msg)


def error(msg: object) -> None:
    _emit("error", msg)
