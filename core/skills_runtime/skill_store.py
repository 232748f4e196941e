"""Skills as directories: shipped with the package, installed by the operator, or agent-created.

A skill directory holds ``skill.toml`` and ``SKILL.md`` (plus optional ``code/`` and
``resources/``). Directories are found one or two levels below each root, so both
``skills/<name>/`` and ``skills/<name>/<version>/`` layouts work and several versions of a
skill can sit side by side. A shipped skill's id (any version) and the reserved
``skills.protocol`` namespace resolve only to the shipped copy: a workspace or created skill
that names one is not loaded (it would replace the bootstrap guide every agent is told to
read first). The index is rebuilt when a root's listing or a manifest changes, so skills
edited on disk show up without a restart.

Skills created over ``create_skill`` live apart from installed ones (shipped, or put in
the workspace's ``skills/`` by the operator): in the state dir, under the ``user.``
namespace only, and never under a name an installed skill has, so an agent cannot publish
``salesforce.leads.sync@9.0.0`` and have unversioned calls (and the operator's secret
grants) go to its copy. Within ``user.`` a caller owns only ``user.<its name>``: the name its
token speaks for, so nobody publishes ``user.alice.report@0.1.0`` before Alice does and
inherits the grant the operator pinned to it.

What created skills store is counted (issue 24: ``create_skill`` stored 25 MB under a 1 MiB
quota): a store given an ``admit`` hook (the blob store's `BlobStore.admit_skill`) stages
and publishes each new skill under the workspace's quota lock, and a skill that does not fit
what is left is refused whole, leaving nothing behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomli_w

from core.skills_runtime.ledger import STAGING_PREFIX
from core.skills_runtime.manifest import (
    ManifestError,
    SkillManifest,
    check_relative_path,
    json_safe,
    parse_manifest,
    split_frontmatter,
    validate_manifest,
)
from core.skills_runtime.names import under, version_key
from core.skills_runtime.shipped import shipped_skills_dir

SHIPPED_DIR = shipped_skills_dir()
GUIDE_NAME = "skills.protocol.guide"
RESERVED_NAMESPACES = ("skills.protocol",)
CREATED_NAMESPACE = "user"
MAX_CREATE_FILES = 100
MAX_CREATE_BYTES = 5 * 1024 * 1024

Source = Literal["shipped", "workspace", "created"]
# Stage a skill (first callable: writes it, returns its staging folder), then publish it
# (second: moves it into place) if it fits the quotas; returns its cost.
Admit = Callable[[Callable[[], Path], Callable[[Path], None]], int]


@dataclass(frozen=True)
class Skill:
    manifest: SkillManifest
    raw: dict[str, Any]
    root: Path
    source: Source
    frontmatter: dict[str, Any]

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def namespace(self) -> str:
        return self.manifest.effective_namespace

    def in_namespace(self, namespace: str) -> bool:
        ns = self.namespace
        return ns == namespace or ns.startswith(namespace + ".")


class SkillNotFound(LookupError):
    pass


class SkillExists(ValueError):
    pass


class NamespaceNotYours(ManifestError):
    """A created skill's name or namespace is outside the caller's own ``user.<name>``."""


@dataclass(frozen=True)
class Problem:
    """A directory that looks like a skill but could not be loaded, and why."""

    path: str
    message: str


def _sort_key(skill: Skill) -> tuple[str, str]:
    return (skill.namespace, skill.name)


class SkillStore:
    def __init__(
        self,
        roots: list[tuple[Source, Path]],
        writable_root: Path | None,
        admit: Admit | None = None,
    ) -> None:
        self._roots = roots
        self._writable_root = writable_root
        self._admit = admit
        self._lock = threading.Lock()
        self._signature: tuple[Any, ...] | None = None
        self._skills: list[Skill] = []
        self._index: dict[tuple[str, str], Skill] = {}
        self.problems: list[Problem] = []

    # ---------------------------------------------------------------- discovery

    def _candidates(self) -> list[tuple[Source, Path]]:
        found: list[tuple[Source, Path]] = []
        for source, root in self._roots:
            for first in _subdirs(root):
                if (first / "skill.toml").is_file():
                    found.append((source, first))
                    continue
                found.extend(
                    (source, second)
                    for second in _subdirs(first)
                    if (second / "skill.toml").is_file()
                )
        return found

    def _current_signature(self, candidates: list[tuple[Source, Path]]) -> tuple[Any, ...]:
        sig: list[Any] = []
        for _, path in candidates:
            for name in ("skill.toml", "SKILL.md"):
                try:
                    st = (path / name).stat()
                    sig.append((str(path), name, st.st_mtime_ns, st.st_size))
                except OSError:
                    sig.append((str(path), name, None))
        return tuple(sig)

    def skills(self) -> list[Skill]:
        """All loadable skills, sorted by (namespace, name, version DESC)."""
        with self._lock:
            candidates = self._candidates()
            signature = self._current_signature(candidates)
            if signature != self._signature:
                self._load(candidates)
                self._signature = signature
            return list(self._skills)

    def _load(self, candidates: list[tuple[Source, Path]]) -> None:
        index: dict[tuple[str, str], Skill] = {}
        problems: list[Problem] = []
        loaded: list[Skill] = []
        for source, path in candidates:
            try:
                loaded.append(load_skill(path, source))
            except (ManifestError, OSError, UnicodeDecodeError) as exc:
                problems.append(Problem(str(path), str(exc)))
        installed = {s.name for s in loaded if s.source != "created"}
        shipped = {s.name.casefold() for s in loaded if s.source == "shipped"}
        for skill in loaded:
            source = skill.source
            if source != "shipped" and (
                skill.name.casefold() in shipped or reserved(skill.name, skill.manifest.namespace)
            ):
                problems.append(
                    Problem(str(skill.root), f"{skill.name!r} is a shipped skill's id or namespace")
                )
                continue
            if source == "created" and (
                skill.name in installed or not under(skill.name, CREATED_NAMESPACE)
            ):
                problems.append(
                    Problem(str(skill.root), f"{skill.name!r} is not a name agents may own")
                )
                continue
            index[(skill.name, skill.version)] = skill
        ordered = sorted(index.values(), key=lambda s: version_key(s.version), reverse=True)
        ordered.sort(key=_sort_key)  # stable: version DESC within each (namespace, name)
        self._skills = ordered
        self._index = index
        self.problems = problems

    def get(self, name: str, version: str | None = None, *, shipped: bool = False) -> Skill:
        """The skill ``name`` at ``version`` (default the latest); ``shipped`` looks only at
        the product's own copies."""
        skills = [
            s for s in self.skills() if s.name == name and (not shipped or s.source == "shipped")
        ]
        if version is not None:
            skills = [s for s in skills if s.version == version]
        if not skills:
            what = f"{name}@{version}" if version else name
            raise SkillNotFound(f"no skill named {what!r}")
        return skills[0]  # sorted version DESC: the latest

    # ------------------------------------------------------------------ creation

    def create(
        self,
        manifest: dict[str, Any],
        skill_md: str,
        files: list[tuple[str, str]],
        owner: str | None = None,
    ) -> Skill:
        """Write a new skill into the workspace atomically (temp dir, then rename).

        ``owner`` is the caller's own namespace (``user.<name>``, from its token); None is a
        caller with none, which may create nothing."""
        if self._writable_root is None:
            raise ManifestError("this runtime has no workspace to create skills in")
        model = validate_manifest(json_safe(manifest))
        if reserved(model.name, model.namespace):
            raise ManifestError(f"the namespace of {model.name!r} is reserved")
        if not under(model.name, CREATED_NAMESPACE) or model.name.count(".") < 2:
            raise ManifestError(
                f"skills created over create_skill are named 'user.<you>.<skill>', "
                f"not {model.name!r}: other names belong to installed skills"
            )
        if owner is None:
            raise NamespaceNotYours(
                "this caller has no skill namespace: its token's name is not one identifier "
                "(create skills with a token named like 'alice', which owns user.alice.*)"
            )
        if model.name.split(".")[:2] != owner.split("."):
            raise NamespaceNotYours(
                f"{model.name!r} is not in your namespace: this caller creates skills under "
                f"{owner}.* only"
            )
        if model.namespace is not None and not under(model.namespace, owner):
            raise NamespaceNotYours(f"a created skill's namespace must be under {owner!r}")
        if any(s.name == model.name and s.source != "created" for s in self.skills()):
            raise ManifestError(f"{model.name!r} is the name of an installed skill")
        if len(files) > MAX_CREATE_FILES:
            raise ManifestError(f"a skill may have at most {MAX_CREATE_FILES} files")
        paths: set[str] = set()
        total = len(skill_md.encode())
        for path, content in files:
            try:
                check_relative_path(path)
            except ValueError as exc:
                raise ManifestError(str(exc)) from exc
            if path in ("skill.toml", "SKILL.md"):
                raise ManifestError(f"{path} comes from 'manifest'/'skill_md', not from 'files'")
            if path in paths:
                raise ManifestError(f"file {path!r} is listed twice")
            paths.add(path)
            total += len(content.encode())
        for path in paths:
            parent = path.rsplit("/", 1)[0] if "/" in path else None
            while parent:
                if parent in paths:
                    raise ManifestError(f"{parent!r} is both a file and a folder")
                parent = parent.rsplit("/", 1)[0] if "/" in parent else None
        if total > MAX_CREATE_BYTES:
            raise ManifestError(f"a created skill may hold at most {MAX_CREATE_BYTES} bytes")
        if model.runtime is not None and model.runtime.entrypoint not in paths:
            raise ManifestError(f"files must include the entrypoint {model.runtime.entrypoint!r}")
        with contextlib.suppress(SkillNotFound):
            self.get(model.name, model.version)
            raise SkillExists(f"skill {model.name}@{model.version} already exists")

        root = self._writable_root
        root.mkdir(parents=True, exist_ok=True)
        target = root / f"{model.name}@{model.version}"
        made: list[Path] = []

        def stage() -> Path:
            staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=root))
            made.append(staging)
            raw = model.model_dump(mode="json", exclude_none=True)
            (staging / "skill.toml").write_text(tomli_w.dumps(raw), encoding="utf-8")
            (staging / "SKILL.md").write_text(skill_md, encoding="utf-8")
            for path, content in files:
                dest = staging / path
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(content, encoding="utf-8")
            for p in [staging, *staging.rglob("*")]:
                p.chmod(0o755 if p.is_dir() else 0o644)
            _fsync_tree(staging)
            return staging

        def publish(staging: Path) -> None:
            os.rename(staging, target)

        try:
            if self._admit is not None:
                self._admit(stage, publish)
            else:
                publish(stage())
        except FileExistsError as exc:
            _discard(made)
            raise SkillExists(f"skill {model.name}@{model.version} already exists") from exc
        except OSError as exc:
            _discard(made)
            if exc.errno in (errno.ENAMETOOLONG, errno.EINVAL, errno.EISDIR, errno.ENOTDIR):
                raise ManifestError(f"a file name cannot be written: {exc.strerror}") from exc
            raise
        except BaseException:
            _discard(made)  # e.g. over a quota: nothing half-written stays
            raise
        with self._lock:
            self._signature = None
        return self.get(model.name, model.version)


def reserved(name: str, namespace: str | None) -> bool:
    """True if a skill name or its declared namespace is in a reserved namespace."""
    return any(
        under(name, ns) or (namespace is not None and under(namespace, ns))
        for ns in RESERVED_NAMESPACES
    )


def load_skill(path: Path, source: Source) -> Skill:
    manifest, raw = parse_manifest((path / "skill.toml").read_text(encoding="utf-8"))
    frontmatter: dict[str, Any] = {}
    md = path / "SKILL.md"
    if md.is_file():
        frontmatter, _ = split_frontmatter(md.read_text(encoding="utf-8"))
    return Skill(
        manifest=manifest, raw=raw, root=path.resolve(), source=source, frontmatter=frontmatter
    )


def _subdirs(root: Path) -> list[Path]:
    try:
        with os.scandir(root) as it:
            return sorted(
                Path(e.path)
                for e in it
                if e.is_dir(follow_symlinks=False)
                and not e.name.startswith(".")
                and e.name not in ("__pycache__",)
            )
    except OSError:
        return []


def _discard(staged: list[Path]) -> None:
    for staging in staged:
        shutil.rmtree(staging, ignore_errors=True)


def _fsync_tree(root: Path) -> None:
    for p in [*root.rglob("*"), root]:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
