"""Flow bundle files: parse (YAML or JSON) into `FlowBundle`, list every problem, dump back.

A bad bundle reports *all* its problems at once, each with a field path (``steps[2].
verification.kind``; list indexes are 0-based), so an author fixes a file in one pass.
Schema problems come from pydantic; the cross-record rules (step ids, ordinals, the flow's
step list) are checked on the raw data too, so both kinds show up together.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..noma.bounded import ContentRefused, check_tree, load_yaml_bounded, node_budget
from .errors import Problem
from .ids import STEP_ID
from .models import ANATOMY, FlowBundle

MAX_BUNDLE_BYTES = 2 * 1024 * 1024
# `flow_x.json` is how Knowtation names a bundle; `*.flow.yaml` / `*.flow.json` ours.
BUNDLE_SUFFIXES = (".flow.yaml", ".flow.yml", ".flow.json", ".json")
BUNDLE_NAMES_HINT = "bundle files are named *.json, *.flow.json or *.flow.yaml"
# Never bundles and never problems: hidden files (interrupted atomic writes) and the
# Python package marker the shipped demo folder carries.
IGNORED_NAMES = frozenset({"__init__.py", "__pycache__"})
FLOW_INPUT_REF = "flow.inputs."
STEP_OUTPUT_REF = re.compile(r"^(flow_[a-z0-9_]{1,64}#[1-9][0-9]{0,5})\.outputs\.(.+)$")


class BundleError(Exception):
    """A bundle that cannot be used; `problems` lists every reason with its field path."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems[:5]))
        self.problems = problems


class DuplicateKey(ValueError):
    """A mapping names a key twice: one value would be silently dropped."""


class _Loader(yaml.SafeLoader):  # type: ignore[misc]
    """Safe YAML with timestamps left as strings, so `updated` round-trips byte for byte,
    and duplicate keys refused (PyYAML would keep the last one silently)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        keys = [self.construct_object(k, deep=True) for k, _ in node.value]
        hashable = [k for k in keys if isinstance(k, str | int | float | bool)]
        if len(set(hashable)) != len(hashable):
            raise DuplicateKey(f"a key appears twice (line {node.start_mark.line + 1})")
        return super().construct_mapping(node, deep=deep)


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise DuplicateKey("a key appears twice in one object")
    return dict(pairs)


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def is_bundle_path(path: Path) -> bool:
    return path.name.endswith(BUNDLE_SUFFIXES)


def is_ignored_path(path: Path) -> bool:
    return path.name.startswith(".") or path.name in IGNORED_NAMES


def is_json_path(path: Path) -> bool:
    return path.name.endswith(".json")


def read_bundle_file(path: Path) -> FlowBundle:
    """Read and validate one bundle file; raises `BundleError` with every problem."""
    try:
        size = path.stat().st_size
        if size > MAX_BUNDLE_BYTES:
            raise BundleError([Problem("", f"file is larger than {MAX_BUNDLE_BYTES} bytes")])
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError([Problem("", f"cannot read the file: {type(exc).__name__}")]) from exc
    return parse_bundle_text(text, json_form=is_json_path(path))


def parse_bundle_text(text: str, *, json_form: bool = False) -> FlowBundle:
    if len(text) > MAX_BUNDLE_BYTES:
        raise BundleError([Problem("", f"larger than {MAX_BUNDLE_BYTES} bytes")])
    try:
        if json_form:
            data = json.loads(text, object_pairs_hook=_json_object)
            check_tree(data, node_budget(text))
        else:
            data = load_yaml_bounded(text, _Loader)
    except DuplicateKey as exc:
        raise BundleError([Problem("", str(exc))]) from None
    except RecursionError:
        raise BundleError([Problem("", "nested too deeply")]) from None
    except ContentRefused as exc:
        raise BundleError([Problem("", f"cannot be read: {exc}")]) from None
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else getattr(exc, "lineno", None)
        kind = "JSON" if json_form else "YAML"
        raise BundleError([Problem("", f"not valid {kind} (line {line})")]) from None
    except ValueError as exc:  # a number past sys.int_max_str_digits in the JSON form
        raise BundleError([Problem("", f"cannot be read: {exc}")]) from None
    return parse_bundle(data)


def parse_bundle(data: Any) -> FlowBundle:
    """Validate a parsed bundle mapping; raises `BundleError` listing every problem."""
    if not isinstance(data, dict):
        raise BundleError([Problem("", "a bundle is a mapping with 'flow' and 'steps'")])
    problems: list[Problem] = []
    bundle: FlowBundle | None = None
    try:
        bundle = FlowBundle.model_validate(data)
    except ValidationError as exc:
        problems.extend(_schema_problems(exc))
    problems.extend(_cross_problems(data))
    if problems or bundle is None:
        raise BundleError(_dedupe(problems))
    return bundle


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _schema_problems(exc: ValidationError) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        message = err["msg"]
        if loc and loc[-1] in ANATOMY and loc[0] == "steps" and err["type"] == "missing":
            message = (
                "missing: a step needs trigger, when_not_to_run, output_shape and "
                "verification (anatomy rule)"
            )
        elif err["type"] == "extra_forbidden":
            message = "unknown field (not part of the v0 record)"
        elif message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        problems.append(Problem(_path(loc), message))
    return problems


def _cross_problems(data: dict[str, Any]) -> list[Problem]:
    """Rules across records: the flow lists its steps in order and each step points back."""
    flow = data.get("flow")
    steps = data.get("steps")
    if not isinstance(flow, dict) or not isinstance(steps, list):
        return []
    problems = []
    flow_id = flow.get("flow_id")
    listed = flow.get("steps")
    listed = listed if isinstance(listed, list) else []
    seen: set[str] = set()
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        where = f"steps[{index}]"
        ordinal = index + 1
        if step.get("ordinal") != ordinal:
            problems.append(Problem(f"{where}.ordinal", f"must be {ordinal} (steps are in order)"))
        sid = step.get("step_id")
        if isinstance(flow_id, str) and sid != f"{flow_id}#{ordinal}":
            problems.append(
                Problem(f"{where}.step_id", f"must be <flow_id>#{ordinal} for this position")
            )
        if isinstance(flow_id, str) and step.get("flow_id") != flow_id:
            problems.append(Problem(f"{where}.flow_id", "must equal flow.flow_id"))
        if isinstance(sid, str):
            if sid in seen:
                problems.append(Problem(f"{where}.step_id", "duplicate step id"))
            seen.add(sid)
    problems.extend(_reference_problems(flow, steps))
    if [s.get("step_id") for s in steps if isinstance(s, dict)] != listed:
        problems.append(Problem("flow.steps", "must list the step ids of 'steps', in order"))
    for index, sid in enumerate(listed):
        if isinstance(sid, str) and not STEP_ID.match(sid):
            problems.append(Problem(f"flow.steps[{index}]", "must look like flow_<slug>#<ordinal>"))
    return problems


def _names(items: Any, key: str = "name") -> list[Any]:
    return [i.get(key) for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _duplicates(items: Any, where: str) -> list[Problem]:
    seen: set[Any] = set()
    out = []
    for index, name in enumerate(_names(items)):
        if isinstance(name, str) and name in seen:
            out.append(Problem(f"{where}[{index}].name", "duplicate name"))
        seen.add(name)
    return out


def _reference_problems(flow: dict[str, Any], steps: list[Any]) -> list[Problem]:
    """Each `inputs[].from` names a declared flow input or an output of an earlier step."""
    problems = _duplicates(flow.get("inputs"), "flow.inputs")
    flow_inputs = {n for n in _names(flow.get("inputs")) if isinstance(n, str)}
    earlier: dict[str, set[str]] = {}
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        problems.extend(_duplicates(step.get("inputs"), f"steps[{index}].inputs"))
        inputs = step.get("inputs")
        for j, item in enumerate(inputs if isinstance(inputs, list) else []):
            ref = item.get("from") if isinstance(item, dict) else None
            if not isinstance(ref, str):
                continue
            message = reference_problem(ref, flow_inputs, earlier)
            if message is not None:
                problems.append(Problem(f"steps[{index}].inputs[{j}].from", message))
        sid = step.get("step_id")
        if isinstance(sid, str):
            earlier[sid] = {n for n in _names(step.get("outputs")) if isinstance(n, str)}
    return problems


def reference_problem(ref: str, flow_inputs: set[str], earlier: dict[str, set[str]]) -> str | None:
    """Why ``ref`` does not resolve in its bundle (None when it does)."""
    if ref.startswith(FLOW_INPUT_REF):
        if ref[len(FLOW_INPUT_REF) :] not in flow_inputs:
            return "names a flow input the flow does not declare"
        return None
    match = STEP_OUTPUT_REF.match(ref)
    if match is None:
        return "must be flow.inputs.<name> or <step_id>.outputs.<name>"
    if match.group(1) not in earlier:
        return "names a step that does not come before this one"
    if match.group(2) not in earlier[match.group(1)]:
        return "names an output that step does not declare"
    return None


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.path, p.message) not in seen:
            seen.add((p.path, p.message))
            out.append(p)
    return out


def dump_bundle(bundle: FlowBundle, fmt: str = "yaml") -> str:
    """The export form: exactly the canonical records, fields in spec order, byte-stable.

    `parse_bundle_text(dump_bundle(b))` equals `b` field for field, so export -> import ->
    export is byte-identical in either format."""
    data = bundle.to_json()
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
