"""Make mounted skills importable as ``skills.<dotted name>``.

A skill named ``salesforce.leads.sync`` with ``entrypoint = "code/main.py"`` becomes the
package ``skills.salesforce.leads.sync``: its module is the entrypoint file and its
``__path__`` is the entrypoint's directory, so ``from skills.salesforce.leads.sync import
sync_leads`` reaches the entrypoint's functions and ``from . import helpers`` inside it
reaches ``code/helpers.py``. Every proper prefix (``skills.salesforce``,
``skills.salesforce.leads``) is an empty package, so skills that share a namespace compose.
Only skills mounted into this run resolve; everything else raises ``ModuleNotFoundError``.

Built on the interpreter's frozen import machinery (already loaded at startup) instead of
``importlib.abc``/``importlib.util``, which would import ``typing`` on every run.
"""

from __future__ import annotations

import _frozen_importlib as _bootstrap
import _frozen_importlib_external as _external
import sys

ROOT = "skills"


class _EmptyPackageLoader:
    """Loader for the namespace levels: a package with nothing in it."""

    def create_module(self, spec: object) -> None:
        return None

    def exec_module(self, module: object) -> None:
        module.__path__ = []  # type: ignore[attr-defined]


class SkillsFinder:
    """A ``sys.meta_path`` finder for ``skills`` and the mounted skills below it."""

    def __init__(self, skills: dict[str, dict[str, str | None]]) -> None:
        self._skills = skills
        self._prefixes: set[str] = set()
        for name in skills:
            parts = name.split(".")
            for i in range(1, len(parts)):
                self._prefixes.add(".".join(parts[:i]))

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if fullname == ROOT:
            return self._empty(fullname)
        if not fullname.startswith(ROOT + "."):
            return None
        name = fullname[len(ROOT) + 1 :]
        info = self._skills.get(name)
        if info is not None:
            entry = info.get("entrypoint")
            if not entry:
                return self._empty(fullname)
            file = f"{info['dir']}/{entry}"
            return _external.spec_from_file_location(
                fullname, file, submodule_search_locations=[file.rpartition("/")[0]]
            )
        if name in self._prefixes:
            return self._empty(fullname)
        return None

    def invalidate_caches(self) -> None:
        pass

    @staticmethod
    def _empty(fullname: str) -> object:
        spec = _bootstrap.ModuleSpec(fullname, _EmptyPackageLoader(), is_package=True)
        spec.submodule_search_locations = []
        return spec


def install(skills: dict[str, dict[str, str | None]]) -> None:
    sys.meta_path.insert(0, SkillsFinder(skills))
