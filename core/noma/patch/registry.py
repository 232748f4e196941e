"""Op name -> implementation. Each implementation mutates an `OpState` or raises.

The implementations live in four families (blocks, notes, tables, datasets); a family is
imported the first time one of its ops is applied, so a one-shot ``noma patch`` of an
attribute never loads the table code or the YAML/JSON/CSV dataset writers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .ops_catalog import CATALOG
from .state import OpState

OpFunc = Callable[[OpState, dict[str, Any]], None]

# Every op's family module (its `ops_catalog` record); the module defines a function
# named after the op.
_FAMILY_OF = {name: record.family for name, record in CATALOG.items()}


class _Registry(Mapping[str, OpFunc]):
    """A read-only op table that imports an op's family on first lookup."""

    def __init__(self) -> None:
        self._loaded: dict[str, OpFunc] = {}

    def __getitem__(self, name: str) -> OpFunc:
        func = self._loaded.get(name)
        if func is None:
            family = _FAMILY_OF[name]  # KeyError for an unknown op, as a dict would
            module = importlib.import_module(f"{__package__}.{family}")
            func = getattr(module, name)
            self._loaded[name] = func
        return func

    def __iter__(self) -> Iterator[str]:
        return iter(_FAMILY_OF)

    def __len__(self) -> int:
        return len(_FAMILY_OF)


OPS: Mapping[str, OpFunc] = _Registry()
