"""May a compiled renderer stand in for the pure one? (``render --to noma`` and the exports.)

setup.py compiles copies of ``render.py`` (as ``core.noma._render_native``) and of the
exporters' hot modules (as the package ``core.noma._export_native``) with mypyc, recording
the sha256 of every source it copied. A copy is used only while those sources on disk are
still the ones it was built from, never when ``NOMA_PURE_PYTHON`` is set (to anything but
``0``), and never when it does not load: an edited source is always what runs, and the
pure modules stay the reference the tests compare the copies with.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from types import ModuleType

FOLDER = os.path.dirname(os.path.abspath(__file__))
# What the compiled renderers are built from, relative to ``core/noma`` (setup.py agrees).
SOURCES = (
    "render.py",
    "attrs.py",
    "export/common.py",
    "export/inline.py",
    "export/markdown.py",
    "export/html.py",
)


def digests(folder: str = FOLDER) -> dict[str, str]:
    """sha256 (hex) of each of `SOURCES` under ``folder``, as setup.py records them."""
    out = {}
    for name in SOURCES:
        with open(os.path.join(folder, *name.split("/")), "rb") as handle:
            out[name] = hashlib.sha256(handle.read()).hexdigest()
    return out


def load_compiled(name: str, folder: str = FOLDER) -> tuple[ModuleType | None, str]:
    """``core.noma.<name>`` when it was built from the sources in ``folder`` now, with why
    (or why not) in words."""
    if os.environ.get("NOMA_PURE_PYTHON", "0") not in ("", "0"):
        return None, "pure Python: NOMA_PURE_PYTHON is set"
    full = f"{__name__.rpartition('.')[0]}.{name}"
    try:
        native = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            return None, f"pure Python: the compiled {name} does not load ({exc})"
        return None, f"pure Python: no compiled {name} was built"
    except Exception as exc:  # a build for another Python, or a stale one that fails early
        return None, f"pure Python: the compiled {name} does not load ({exc})"
    try:
        current = digests(folder)
    except OSError:
        return None, "pure Python: its sources cannot be read to check the build"
    if getattr(native, "SOURCE_DIGESTS", None) != current:
        return None, f"pure Python: the compiled {name} is stale (reinstall to rebuild it)"
    return native, "compiled with mypyc"
