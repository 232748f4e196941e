"""The workspace's canonical flows: every valid bundle under ``flows/``.

Bundles are ``flows/*.json`` (Knowtation's ``flow_x.json``), ``*.flow.json`` and
``*.flow.yaml``. Nothing there is silently ignored: a file that does not validate, a file
with another name, or a folder is listed by `invalid` (hidden files, such as an interrupted
atomic write, and a Python package marker are the only things skipped).

A bundle in ``flows/`` is canonical (the workspace owner put it there, or a reviewer
approved an import into it). Imports wait as proposals in the store and are invisible here
until approved, which is what keeps them inert. Each entry is content-addressed (sha256 of
its canonical JSON) so a run can pin exactly what it started on.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from .bundle import (
    BUNDLE_NAMES_HINT,
    BundleError,
    is_bundle_path,
    is_ignored_path,
    is_json_path,
    read_bundle_file,
)
from .errors import Problem
from .ids import semver_key, sha256_hex
from .models import FlowBundle


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    bundle: FlowBundle
    path: Path
    sha256: str

    @property
    def fmt(self) -> str:
        """The bundle's own format: export writes JSON for a JSON bundle, else YAML."""
        return "json" if is_json_path(self.path) else "yaml"


@dataclass(frozen=True, slots=True)
class InvalidBundle:
    path: Path
    problems: tuple[Problem, ...]


def bundle_sha256(bundle: FlowBundle) -> str:
    """Content address of a bundle: the sha256 of its canonical JSON (key order fixed)."""
    text = json.dumps(bundle.to_json(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return sha256_hex(text)


class FlowCatalog:
    """Reads ``flows/`` lazily; a file is re-parsed only when its size or mtime changes."""

    def __init__(self, flows_dir: Path) -> None:
        self.flows_dir = flows_dir
        self._cache: dict[Path, tuple[tuple[int, int], CatalogEntry | InvalidBundle]] = {}
        self._lock = threading.Lock()

    def _scan(self) -> list[CatalogEntry | InvalidBundle]:
        if not self.flows_dir.is_dir():
            return []
        out: list[CatalogEntry | InvalidBundle] = []
        with self._lock:
            seen: set[Path] = set()
            for path in sorted(self.flows_dir.iterdir()):
                if is_ignored_path(path):
                    continue
                if not is_bundle_path(path) or not path.is_file():
                    kind = "a folder" if path.is_dir() else "not a bundle file"
                    problem = Problem("", f"{kind}: {BUNDLE_NAMES_HINT}")
                    out.append(InvalidBundle(path, (problem,)))
                    continue
                seen.add(path)
                stat = path.stat()
                key = (stat.st_size, stat.st_mtime_ns)
                cached = self._cache.get(path)
                if cached is None or cached[0] != key:
                    cached = (key, _load(path))
                    self._cache[path] = cached
                out.append(cached[1])
            for gone in set(self._cache) - seen:
                del self._cache[gone]
        return out

    def entries(self) -> list[CatalogEntry]:
        """Valid, unambiguous bundles sorted by flow id then version (newest last)."""
        valid = [e for e in self._scan() if isinstance(e, CatalogEntry)]
        by_key: dict[tuple[str, str], list[CatalogEntry]] = {}
        for entry in valid:
            by_key.setdefault((entry.bundle.flow_id, entry.bundle.version), []).append(entry)
        unique = [group[0] for group in by_key.values() if len({e.sha256 for e in group}) == 1]
        return sorted(unique, key=lambda e: (e.bundle.flow_id, semver_key(e.bundle.version)))

    def invalid(self) -> list[InvalidBundle]:
        """Files that failed validation, and same id+version files that disagree."""
        scanned = self._scan()
        out = [e for e in scanned if isinstance(e, InvalidBundle)]
        by_key: dict[tuple[str, str], list[CatalogEntry]] = {}
        for entry in scanned:
            if isinstance(entry, CatalogEntry):
                key = (entry.bundle.flow_id, entry.bundle.version)
                by_key.setdefault(key, []).append(entry)
        for group in by_key.values():
            if len({e.sha256 for e in group}) > 1:
                problem = Problem("flow.version", "another file has this flow id and version")
                out.extend(InvalidBundle(e.path, (problem,)) for e in group)
        return out

    def find(self, flow_id: str, version: str | None = None) -> CatalogEntry | None:
        """The entry for ``flow_id`` at ``version`` (the newest version when None)."""
        matches = [e for e in self.entries() if e.bundle.flow_id == flow_id]
        if version is not None:
            matches = [e for e in matches if e.bundle.version == version]
        return matches[-1] if matches else None


def _load(path: Path) -> CatalogEntry | InvalidBundle:
    try:
        bundle = read_bundle_file(path)
    except BundleError as exc:
        return InvalidBundle(path, tuple(exc.problems))
    return CatalogEntry(bundle, path, bundle_sha256(bundle))
