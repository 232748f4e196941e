"""``skill.toml`` and ``SKILL.md``: parsed, validated, and kept JSON-safe for the wire.

The manifest is validated with pydantic (unknown keys are kept: the spec lets skills carry
more metadata than v0.1 defines), and ``raw`` is the parsed TOML with dates turned into
ISO strings so ``describe_skill`` can return "skill.toml parsed as JSON" as it is.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import PurePosixPath
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.noma.bounded import ContentRefused, load_toml_bounded, load_yaml_bounded
from core.skills_runtime.names import is_secret_name, is_skill_name, is_version

MAX_NAME_BYTES = 255  # one file or directory name (the usual filesystem limit)
MAX_PATH_BYTES = 1024


class ManifestError(ValueError):
    """skill.toml or SKILL.md is not valid; the message says which field and why."""


def check_relative_path(path: str) -> str:
    """A path inside a skill directory: relative, no ``..``, no empty or hidden tricks."""
    if not path or "\x00" in path or "\\" in path:
        raise ValueError("path must be a non-empty POSIX path")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise ValueError(f"path {path!r} must be relative to the skill directory")
    parts = path.split("/")
    if any(part in ("..", ".", "") for part in parts):
        raise ValueError(f"path {path!r} may not contain '..', '.' or empty segments")
    if len(path.encode()) > MAX_PATH_BYTES or any(
        len(part.encode()) > MAX_NAME_BYTES for part in parts
    ):
        raise ValueError(
            f"path is too long: at most {MAX_NAME_BYTES} bytes per name and "
            f"{MAX_PATH_BYTES} bytes in all"
        )
    return path


class RuntimeSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    language: Literal["python"]
    entrypoint: str
    export: str = "main"

    @field_validator("entrypoint")
    @classmethod
    def _entrypoint(cls, value: str) -> str:
        check_relative_path(value)
        if not value.endswith(".py"):
            raise ValueError("entrypoint must be a .py file inside the skill directory")
        return value

    @field_validator("export")
    @classmethod
    def _export(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError("export must be a Python function name")
        return value


class Permissions(BaseModel):
    model_config = ConfigDict(extra="allow")

    network: list[str] = Field(default_factory=list)
    secrets: list[str] = Field(default_factory=list)

    @field_validator("secrets")
    @classmethod
    def _secrets(cls, value: list[str]) -> list[str]:
        for name in value:
            if not is_secret_name(name):
                raise ValueError(f"secret name {name!r} must look like an environment variable")
        return value


class SkillManifest(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    version: str
    description: str
    kind: Literal["action", "instruction"]
    namespace: str | None = None
    tags: list[str] = Field(default_factory=list)
    runtime: RuntimeSection | None = None
    inputs: dict[str, Any] | None = None
    permissions: Permissions = Field(default_factory=Permissions)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not is_skill_name(value):
            raise ValueError(
                "name must be dotted Python identifiers (e.g. 'salesforce.leads.sync')"
            )
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not is_version(value):
            raise ValueError("version must look like '0.1.0'")
        return value

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        if value is not None and not is_skill_name(value):
            raise ValueError("namespace must be dotted identifiers (e.g. 'salesforce')")
        return value

    @model_validator(mode="after")
    def _action_has_runtime(self) -> SkillManifest:
        if self.kind == "action" and self.runtime is None:
            raise ValueError("an action skill needs a [runtime] section")
        return self

    @property
    def effective_namespace(self) -> str:
        """The manifest's namespace, else the first segment of the name."""
        return self.namespace or self.name.split(".", 1)[0]


def json_safe(value: Any) -> Any:
    """TOML/YAML values as JSON: dates and times become ISO strings."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return value.isoformat()
    return value


def _describe(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for err in errors():
            loc = ".".join(str(p) for p in err.get("loc", ())) or "manifest"
            parts.append(f"{loc}: {err.get('msg')}")
        return "; ".join(parts)
    return str(exc)


def validate_manifest(data: dict[str, Any]) -> SkillManifest:
    try:
        return SkillManifest.model_validate(data)
    except ValueError as exc:
        raise ManifestError(_describe(exc)) from exc


def parse_manifest(text: str) -> tuple[SkillManifest, dict[str, Any]]:
    """Parse skill.toml text into the validated model and its JSON-safe raw form."""
    try:
        data = load_toml_bounded(text)
    except ContentRefused as exc:
        raise ManifestError(f"skill.toml cannot be read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"skill.toml is not valid TOML: {exc}") from exc
    raw = json_safe(data)
    return validate_manifest(raw), raw


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """SKILL.md -> (frontmatter mapping, body). No or broken frontmatter gives ``{}``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines(keepends=True)
    if lines[0].rstrip("\r\n") != "---":
        return {}, text
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            head = "".join(lines[1:i])
            body = "".join(lines[i + 1 :])
            try:
                data = load_yaml_bounded(head, yaml.SafeLoader)
            except (yaml.YAMLError, ValueError):  # ValueError: beyond the bounds
                return {}, body
            return (json_safe(data) if isinstance(data, dict) else {}), body
    return {}, text
