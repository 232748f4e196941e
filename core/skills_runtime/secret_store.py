"""Operator-granted secrets: which skill may receive which named secret, and its value.

The server's environment is never a secret source by itself. An operator grants named
secrets to named skills in ``noma-workbench.toml``, and says where each value comes from:
a 0600 values file in the workspace, or a named environment variable.

    [secrets]
    values_file = ".noma-workbench/secrets.toml"   # NAME = "value"; mode 0600 (default path)

    [secrets.from_env]                              # secret name -> environment variable
    SALESFORCE_API_KEY = "SALESFORCE_API_KEY"

    [secrets.grants]                                # skill[@version|@sha256:digest] -> names
    "salesforce.leads.sync" = ["SALESFORCE_API_KEY"]
    "user.alice.report@0.1.0" = ["REPORT_TOKEN"]

A run receives a secret only if it is granted to the skill *and* declared in the skill's
``permissions.secrets``. A grant to an agent-created skill (``create_skill``) counts only
when it pins a version or a content digest, so a later version an agent publishes under
the same name never inherits it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.skills_runtime.names import is_secret_name, is_skill_name, is_version
from core.skills_runtime.skill_store import Skill

DEFAULT_VALUES_FILE = ".noma-workbench/secrets.toml"
DIGEST_PREFIX = "sha256:"


@dataclass(frozen=True)
class Grant:
    skill: str
    version: str | None
    digest: str | None
    secrets: tuple[str, ...]

    @property
    def pinned(self) -> bool:
        return self.version is not None or self.digest is not None


@dataclass
class SecretStore:
    """Grants and values; ``for_skill`` is the only way a run gets a secret."""

    grants: list[Grant] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def empty(cls) -> SecretStore:
        return cls()

    @classmethod
    def from_config(
        cls, root: Path, section: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> SecretStore:
        """Read the ``[secrets]`` section; problems are kept and the bad parts ignored."""
        env = os.environ if environ is None else environ
        store = cls()
        store._read_grants(section.get("grants"))
        from_env = section.get("from_env", {})
        if isinstance(from_env, dict):
            for name, var in from_env.items():
                if not is_secret_name(name) or not isinstance(var, str):
                    store.problems.append(f"[secrets.from_env] {name!r}: not a secret name")
                elif var in env:
                    store.values[name] = env[var]
        else:
            store.problems.append("[secrets.from_env] must be a table")
        values_file = section.get("values_file", DEFAULT_VALUES_FILE)
        if isinstance(values_file, str):
            store._read_values(root, values_file, explicit="values_file" in section)
        else:
            store.problems.append("[secrets] values_file must be a path")
        return store

    def _read_grants(self, grants: Any) -> None:
        if grants is None:
            return
        if not isinstance(grants, dict):
            self.problems.append("[secrets.grants] must be a table")
            return
        for key, names in grants.items():
            skill, _, pin = str(key).partition("@")
            ok_names = isinstance(names, list) and all(
                isinstance(n, str) and is_secret_name(n) for n in names
            )
            digest = pin[len(DIGEST_PREFIX) :] if pin.startswith(DIGEST_PREFIX) else None
            version = pin if pin and digest is None else None
            if (
                not is_skill_name(skill)
                or not ok_names
                or (version is not None and not is_version(version))
                or (digest is not None and len(digest) != 64)
            ):
                self.problems.append(f"[secrets.grants] {key!r}: not a valid grant")
                continue
            self.grants.append(Grant(skill, version, digest, tuple(names)))

    def _read_values(self, root: Path, relpath: str, *, explicit: bool) -> None:
        path = (root / relpath).resolve()
        if not path.is_relative_to(root.resolve()):
            self.problems.append("[secrets] values_file must be inside the workspace")
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            if explicit:
                self.problems.append(f"secrets values file {relpath} does not exist")
            return
        except OSError as exc:
            self.problems.append(f"secrets values file {relpath}: {exc.strerror}")
            return
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_uid != os.geteuid():
                self.problems.append(
                    f"secrets values file {relpath} must be a regular file owned by this user "
                    "with mode 0600; its values were not loaded"
                )
                return
            try:
                data = tomllib.loads(fh.read().decode("utf-8"))
            except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                self.problems.append(f"secrets values file {relpath}: {exc}")
                return
        for name, value in data.items():
            if is_secret_name(name) and isinstance(value, str):
                self.values.setdefault(name, value)

    def granted_names(self, skill: Skill) -> set[str]:
        """Names the operator granted to this skill (its version and content included)."""
        names: set[str] = set()
        digest: str | None = None
        for grant in self.grants:
            if grant.skill != skill.name:
                continue
            if skill.source == "created" and not grant.pinned:
                continue  # an agent's later version must never inherit an operator's grant
            if grant.version is not None and grant.version != skill.version:
                continue
            if grant.digest is not None:
                digest = digest or skill_digest(skill.root)
                if grant.digest != digest:
                    continue
            names.update(grant.secrets)
        return names

    def for_skill(self, skill: Skill) -> dict[str, str]:
        """Values of secrets both granted to ``skill`` and declared in its manifest."""
        declared = set(skill.manifest.permissions.secrets)
        wanted = declared & self.granted_names(skill)
        return {name: self.values[name] for name in sorted(wanted) if name in self.values}


def skill_digest(root: Path) -> str:
    """sha256 over every regular file of a skill directory (relative path and bytes)."""
    h = hashlib.sha256()
    files: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            files.append((path.relative_to(root).as_posix(), path))
    for rel, path in sorted(files):
        data = path.read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()
