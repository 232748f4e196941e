"""Typed caches kept on a document, each owned by one module.

A tree is read-only once built (`core.noma.nodes`), so what is learnt from it (the
validator's walk, its findings, the guard's outline) stays true and is kept on it. Each
such cache is a `Memo`: a typed key that the module owning the cache makes once, at
import, and keeps to itself; only that module creates, reads and invalidates the value,
and every other module asks it (``scan_document``, ``outline``, ...). The document holds
the values in one private table (``Document._memos``), which only this module touches.

Why keys rather than one slot per cache on `Document`: the types live in the modules
that own them (a `Scan` in ``validate.scan``), which import `nodes`; a slot typed with
them would make `nodes` import them back. A key carries its type (``Memo[Scan]``), so
reads are typed without that import, and ``tests/noma/test_memos.py`` checks that each
key is named in its owner module only.
"""

from __future__ import annotations

import sys
from typing import Generic, TypeVar, cast

from .nodes import Document

T = TypeVar("T")

# Every memo made, by name: a name is made once (two owners of one cache is a bug).
MEMOS: dict[str, Memo[object]] = {}


class Memo(Generic[T]):
    """One typed cache on documents. ``name`` says what it holds; ``owner`` is the module
    that made it (the only one that may read or write it)."""

    __slots__ = ("name", "owner")

    def __init__(self, name: str) -> None:
        if name in MEMOS:
            raise ValueError(f"memo {name!r} is already owned by {MEMOS[name].owner}")
        self.name = name
        self.owner: str = sys._getframe(1).f_globals.get("__name__", "?")
        MEMOS[name] = cast("Memo[object]", self)

    def __repr__(self) -> str:
        return f"Memo({self.name!r}, owner={self.owner!r})"

    def get(self, doc: Document) -> T | None:
        """The value kept on ``doc``, or None."""
        return doc._memos.get(self)  # type: ignore[return-value]  # put stored a T

    def put(self, doc: Document, value: T) -> T:
        """Keep ``value`` on ``doc`` (replacing any); returns it."""
        doc._memos[self] = value
        return value

    def clear(self, doc: Document) -> None:
        """Forget the value kept on ``doc``, if any."""
        doc._memos.pop(self, None)
