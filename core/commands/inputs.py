"""Input files the CLI reads for a command (ops, bundles, manifests): text or a refusal.

A file handed to a command as its input (``--ops FILE``, ``flow import FILE``, stdin) that is
not UTF-8 text, or not the JSON the command expects, is the caller's mistake: the command
says which file and why, and exits 2 (the code of a usage error), never 1 (which means the
input was read and then rejected, e.g. a patch op that does not apply) and never with a
traceback. `core.cli.main` turns `InputError` into that message and exit code.

Documents are different: a ``.noma`` file that is not UTF-8 is read byte-exact and the
validator reports it (``invalid_utf8``), so ``check`` exits 1 and ``fmt`` refuses it, by the
protocol's rules.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .. import strict_json


class InputError(Exception):
    """An input the command cannot use; the message names it and says why."""


def read_bytes(name: str) -> bytes:
    """The bytes of ``name`` (``-`` is stdin)."""
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise InputError(f"{name}: {exc.strerror or exc}") from None


def read_text(name: str) -> str:
    """``name`` as UTF-8 text, or `InputError` naming the first undecodable byte."""
    return decode(read_bytes(name), name)


def decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def read_json(data: bytes | str, name: str) -> Any:
    """Strict JSON text (`core.strict_json`), or `InputError` saying what is wrong."""
    try:
        return strict_json.loads(data)
    except strict_json.NotJsonText as exc:
        raise InputError(f"{name}: {exc}") from None
