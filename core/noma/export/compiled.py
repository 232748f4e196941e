"""The exporters to run: the compiled copies when they may stand in, else these modules.

setup.py compiles `core.noma.export.common`, ``inline``, ``markdown`` and ``html`` with
mypyc into the package ``core.noma._export_native`` (see `core.noma.native_build` for when
a copy may be used). `module` hands `export` the one to call; the pure modules are always
importable by their own names and stay the reference.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from ..native_build import load_compiled

_NOMA = __name__.rsplit(".", 2)[0]  # core.noma


@cache
def load(name: str) -> tuple[ModuleType | None, str]:
    """The compiled copy of exporter module ``name`` (None when it may not be used), with
    why in words; checked once per process."""
    return load_compiled(f"_export_native.{name}")


def module(name: str) -> ModuleType:
    """The ``markdown`` or ``html`` exporter module to call."""
    native, _why = load(name)
    if native is not None:
        return native
    return importlib.import_module(f"{_NOMA}.export.{name}")
