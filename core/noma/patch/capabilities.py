"""Capability sidecars (Annex A): ``<doc>.capabilities.yml``, parsed, validated, advisory.

Which grant an op needs is its record's `ops_catalog.Capability` rule.

v1.0 never enforces a descriptor (A.4): this module only explains, per op, whether an
agent would hold a grant, and every such note is labelled advisory. An absent or
unreadable descriptor grants nothing (A.2), and an unknown version falls back to that
read-only default (A.5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..boundary import read_file
from ..frontmatter import load_yaml
from ..ids import find_block
from ..nodes import Document
from .catalog import op_name
from .ops_catalog import ALL_OPS, CATALOG, TARGET_FIELD, Capability

ATTR_TYPES = ("string", "number", "boolean")


def sidecar_path(doc_path: str | Path) -> Path:
    return Path(str(doc_path) + ".capabilities.yml")


@dataclass(slots=True)
class Descriptor:
    path: Path
    exists: bool
    data: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Grants are read only from a present, well-formed, version-1 descriptor."""
        return self.exists and not self.problems

    @property
    def blocks(self) -> dict[str, Any]:
        agent = self.data.get("nomaAgent", {}) if self.usable else {}
        blocks = agent.get("blocks") or {}
        return blocks if isinstance(blocks, dict) else {}

    @property
    def rename_allowed(self) -> bool:
        agent = self.data.get("nomaAgent", {}) if self.usable else {}
        ids = agent.get("ids") or {}
        return bool(isinstance(ids, dict) and ids.get("rename") is True)


def load_descriptor(doc_path: str | Path) -> Descriptor:
    path = sidecar_path(doc_path)
    try:
        # Through the boundary: a sidecar planted as a symlink (to a YAML file elsewhere,
        # whose keys the problems would echo) is refused, not read.
        raw = read_file(path)
        if raw is None:
            return Descriptor(path, exists=False)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return Descriptor(path, exists=False)
    except (OSError, UnicodeDecodeError) as exc:
        return Descriptor(path, exists=True, problems=[f"cannot read the sidecar: {exc}"])
    try:
        data = load_yaml(text)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: beyond `bounded`'s bounds
        return Descriptor(path, exists=True, problems=[f"not valid YAML: {exc}"])
    problems = validate_descriptor(data)
    return Descriptor(path, True, data if isinstance(data, dict) else {}, problems)


def validate_descriptor(data: Any) -> list[str]:
    """Every deviation from the A.3 shape, each with its field path."""
    if not isinstance(data, dict):
        return ["the sidecar must be a mapping with a single 'nomaAgent' key"]
    problems = [f"unknown top-level key '{k}'" for k in data if k != "nomaAgent"]
    agent = data.get("nomaAgent")
    if not isinstance(agent, dict):
        return [*problems, "nomaAgent: required mapping is missing"]
    allowed = {"version", "profile", "blocks", "ids", "validation"}
    problems += [f"nomaAgent.{k}: unknown field" for k in agent if k not in allowed]
    version = agent.get("version")
    if version is None:
        problems.append("nomaAgent.version: required")
    elif version != 1 or isinstance(version, bool):
        problems.append(f"nomaAgent.version: {version!r} is not 1; treated as no grants (A.5)")
    if "profile" in agent and not isinstance(agent["profile"], str):
        problems.append("nomaAgent.profile: must be a string")
    for section, key in (("ids", "rename"), ("validation", "required")):
        value = agent.get(section)
        if value is None:
            continue
        if not isinstance(value, dict):
            problems.append(f"nomaAgent.{section}: must be a mapping")
            continue
        problems += [f"nomaAgent.{section}.{k}: unknown field" for k in value if k != key]
        if key in value and not isinstance(value[key], bool):
            problems.append(f"nomaAgent.{section}.{key}: must be true or false")
    blocks = agent.get("blocks")
    if blocks is not None:
        if not isinstance(blocks, dict):
            problems.append("nomaAgent.blocks: must be a mapping of directive name to policy")
        else:
            for name, policy in blocks.items():
                problems += _validate_block(f"nomaAgent.blocks.{name}", policy)
    return problems


def _validate_block(where: str, policy: Any) -> list[str]:
    if not isinstance(policy, dict):
        return [f"{where}: must be a mapping"]
    problems = [f"{where}.{k}: unknown field" for k in policy if k not in ("ops", "attrs")]
    ops = policy.get("ops")
    if ops is not None:
        if not isinstance(ops, list):
            problems.append(f"{where}.ops: must be a list")
        else:
            problems += [f"{where}.ops: {op!r} is not a v1.0 op" for op in ops if op not in ALL_OPS]
    attrs = policy.get("attrs")
    if attrs is not None:
        if not isinstance(attrs, dict):
            problems.append(f"{where}.attrs: must be a mapping")
        else:
            for key, rule in attrs.items():
                at = f"{where}.attrs.{key}"
                if not isinstance(rule, dict):
                    problems.append(f"{at}: must be a mapping")
                    continue
                problems += [
                    f"{at}.{k}: unknown field"
                    for k in rule
                    if k not in ("type", "min", "max", "enum")
                ]
                if "type" in rule and rule["type"] not in ATTR_TYPES:
                    problems.append(f"{at}.type: must be string, number or boolean")
                for bound in ("min", "max"):
                    if bound in rule and (
                        isinstance(rule[bound], bool) or not isinstance(rule[bound], int | float)
                    ):
                        problems.append(f"{at}.{bound}: must be a number")
                if "enum" in rule and not isinstance(rule["enum"], list):
                    problems.append(f"{at}.enum: must be a list")
    return problems


def _rule(op: dict[str, Any]) -> Capability | None:
    record = CATALOG.get(str(op.get("op")))
    return record.capability if record is not None else None


def block_type(op: dict[str, Any], target_name: str | None) -> str | None:
    """The directive name a grant is looked up under: the new block's for an op whose
    rule is `Capability.NEW_BLOCK` (add_block)."""
    if _rule(op) is Capability.NEW_BLOCK:
        from ..parser import OPENER

        first = str(op.get("content", "")).lstrip().split("\n", 1)[0]
        m = OPENER.match(first.rstrip())
        return m.group(2) if m else None
    return target_name


def advisories(descriptor: Descriptor, op: dict[str, Any], target_name: str | None) -> list[str]:
    """Advisory notes for one op by an agent; never a reason to refuse (A.4)."""
    name = op.get("op")
    rule = _rule(op)
    label = "advisory (not enforced in v1.0)"
    if not descriptor.exists:
        return [f"{label}: no capability sidecar ({descriptor.path.name}); agents hold no grants"]
    if not descriptor.usable:
        return [
            f"{label}: the capability sidecar is not usable ({descriptor.problems[0]}); "
            "agents hold no grants"
        ]
    kind = block_type(op, target_name)
    policy = descriptor.blocks.get(kind) if kind else None
    out = []
    ops = policy.get("ops") if isinstance(policy, dict) else None
    if not ops or name not in ops:
        what = (
            f"'{kind}' blocks" if kind else f"the target of {TARGET_FIELD.get(str(name), 'the op')}"
        )
        out.append(f"{label}: {name} on {what} has no grant in {descriptor.path.name}")
    if rule is Capability.RENAME and not descriptor.rename_allowed:
        out.append(f"{label}: rename_id needs nomaAgent.ids.rename: true")
    if rule is Capability.ATTRIBUTE and isinstance(policy, dict):
        attr_rule = (policy.get("attrs") or {}).get(op.get("key"))
        if isinstance(attr_rule, dict):
            key, value = op.get("key"), op.get("value")
            out += [f"{label}: {p}" for p in _attr_violations(attr_rule, key, value)]
    return out


def _attr_violations(rule: dict[str, Any], key: Any, value: Any) -> list[str]:
    if value is None:
        return []
    out = []
    want = rule.get("type")
    is_num = isinstance(value, int | float) and not isinstance(value, bool)
    actual = "boolean" if isinstance(value, bool) else "number" if is_num else "string"
    if want and want != actual:
        out.append(f"'{key}' expects a {want}, got a {actual}")
    if is_num:
        if "min" in rule and value < rule["min"]:
            out.append(f"'{key}' = {value} is below the minimum {rule['min']}")
        if "max" in rule and value > rule["max"]:
            out.append(f"'{key}' = {value} is above the maximum {rule['max']}")
    if isinstance(rule.get("enum"), list) and value not in rule["enum"]:
        out.append(f"'{key}' = {value!r} is not one of {rule['enum']}")
    return out


def describe(descriptor: Descriptor) -> dict[str, Any]:
    """The descriptor as callers see it (``noma capabilities``, MCP
    ``describe_capabilities``): where it is, whether it is usable, what it grants."""
    agent = descriptor.data.get("nomaAgent", {}) if descriptor.usable else {}
    validation = agent.get("validation") if isinstance(agent, dict) else None
    return {
        "sidecar": str(descriptor.path),
        "exists": descriptor.exists,
        "valid": descriptor.exists and not descriptor.problems,
        "problems": list(descriptor.problems),
        "grants": {
            name: (policy or {}).get("ops", []) if isinstance(policy, dict) else []
            for name, policy in descriptor.blocks.items()
        },
        "rename": descriptor.rename_allowed,
        "note": "advisory only: v1.0 never enforces capability descriptors (Annex A.4)",
        "version": agent.get("version") if isinstance(agent, dict) else None,
        "profile": agent.get("profile") if isinstance(agent, dict) else None,
        "validation_required": bool(
            isinstance(validation, dict) and validation.get("required") is True
        ),
    }


def op_advisories(doc_path: Path, ops: list[Any], doc: Document) -> list[str]:
    """The capability-descriptor advisories an agent's ``ops`` would get (A.4: never a
    reason to refuse), looked up on each op's target block in ``doc``."""
    descriptor = load_descriptor(doc_path)
    notes: list[str] = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        name = op_name(op)
        ident = op.get(TARGET_FIELD.get(name or "", "id"))
        node = find_block(doc, ident)[0] if isinstance(ident, str) else None
        target_name = getattr(node, "name", None) or ("section" if node is not None else None)
        notes += advisories(descriptor, op, target_name)
    return notes
