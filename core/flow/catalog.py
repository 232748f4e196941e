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
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from .bundle import (
    BUNDLE_NAMES_HINT,
    BUNDLE_SUFFIXES,
    IGNORED_NAMES,
    BundleError,
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
    """The bundles under one ``flows/`` folder, parsed once each.

    Every call looks at the folder again (one ``scandir`` and one ``stat`` a file: a bundle
    edited in place keeps the folder's mtime), parses only the files whose size or mtime
    changed, and rebuilds the sorted index only when some file did: with 10,000 flows a
    `find` is a dict lookup after that walk, not a sort and a scan of every entry."""

    def __init__(self, flows_dir: Path) -> None:
        self.flows_dir = flows_dir
        self._cache: dict[str, tuple[tuple[int, int], CatalogEntry | InvalidBundle]] = {}
        self._lock = threading.Lock()
        self._index: _Index | None = None

    def _scan(self) -> _Index:
        with self._lock:
            try:
                with os.scandir(self.flows_dir) as listing:
                    found = sorted(listing, key=lambda item: item.name)
            except (FileNotFoundError, NotADirectoryError):
                found = []
            changed = False
            scanned: list[CatalogEntry | InvalidBundle] = []
            shape: list[tuple[str, str]] = []  # what the folder holds, by name and kind
            for item in found:
                name = item.name
                if name.startswith(".") or name in IGNORED_NAMES:
                    continue
                if not name.endswith(BUNDLE_SUFFIXES) or not item.is_file():
                    kind = "a folder" if item.is_dir() else "not a bundle file"
                    problem = Problem("", f"{kind}: {BUNDLE_NAMES_HINT}")
                    scanned.append(InvalidBundle(self.flows_dir / name, (problem,)))
                    shape.append((name, kind))
                    continue
                stat = item.stat()
                key = (stat.st_size, stat.st_mtime_ns)
                cached = self._cache.get(name)
                if cached is None or cached[0] != key:
                    cached = (key, _load(self.flows_dir / name))
                    self._cache[name] = cached
                    changed = True
                scanned.append(cached[1])
                shape.append((name, "bundle"))
            names = {item.name for item in found}
            for gone in [name for name in self._cache if name not in names]:
                del self._cache[gone]
            index = self._index
            if index is None or changed or index.shape != tuple(shape):
                index = self._index = _Index.of(scanned, tuple(shape))
            return index

    def entries(self) -> list[CatalogEntry]:
        """Valid, unambiguous bundles sorted by flow id then version (newest last)."""
        return list(self._scan().entries)

    def invalid(self) -> list[InvalidBundle]:
        """Files that failed validation, and same id+version files that disagree."""
        return list(self._scan().invalid)

    def find(self, flow_id: str, version: str | None = None) -> CatalogEntry | None:
        """The entry for ``flow_id`` at ``version`` (the newest version when None)."""
        matches = self._scan().by_id.get(flow_id, ())
        if version is not None:
            matches = tuple(e for e in matches if e.bundle.version == version)
        return matches[-1] if matches else None


@dataclass(frozen=True, slots=True)
class _Index:
    """One scan's answers, built once per change of the folder."""

    shape: tuple[tuple[str, str], ...]
    entries: tuple[CatalogEntry, ...]
    invalid: tuple[InvalidBundle, ...]
    by_id: dict[str, tuple[CatalogEntry, ...]]

    @classmethod
    def of(
        cls, scanned: list[CatalogEntry | InvalidBundle], shape: tuple[tuple[str, str], ...]
    ) -> _Index:
        by_key: dict[tuple[str, str], list[CatalogEntry]] = {}
        for entry in scanned:
            if isinstance(entry, CatalogEntry):
                key = (entry.bundle.flow_id, entry.bundle.version)
                by_key.setdefault(key, []).append(entry)
        unique = [group[0] for group in by_key.values() if len({e.sha256 for e in group}) == 1]
        entries = sorted(unique, key=lambda e: (e.bundle.flow_id, semver_key(e.bundle.version)))
        invalid = [e for e in scanned if isinstance(e, InvalidBundle)]
        for group in by_key.values():
            if len({e.sha256 for e in group}) > 1:
                problem = Problem("flow.version", "another file has this flow id and version")
                invalid.extend(InvalidBundle(e.path, (problem,)) for e in group)
        by_id: dict[str, list[CatalogEntry]] = {}
        for entry in entries:
            by_id.setdefault(entry.bundle.flow_id, []).append(entry)
        return cls(
            shape,
            tuple(entries),
            tuple(invalid),
            {flow_id: tuple(group) for flow_id, group in by_id.items()},
        )


def _load(path: Path) -> CatalogEntry | InvalidBundle:
    try:
        bundle = read_bundle_file(path)
    except BundleError as exc:
        return InvalidBundle(path, tuple(exc.problems))
    return CatalogEntry(bundle, path, bundle_sha256(bundle))
