"""docs/mcp-fields.md lists every MCP input and output field with its type; each is checked
here against the server's real input schemas and every body of the typed-client run."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from typed_run import TypedRun

from tests.conftest import REPO

TABLE = REPO / "docs" / "mcp-fields.md"
TOOLS = ("read_doc", "list_ids", "validate_doc", "patch_block")
ADDITIVE_TOOLS = ("patch_block_list", "transcript_read", "describe_capabilities")


@dataclass(frozen=True)
class Row:
    path: str
    types: frozenset[str]
    presence: str


def load_table() -> dict[str, dict[str, Row]]:
    """``{"read_doc input": {path: Row}, ...}`` from the markdown tables."""
    tables: dict[str, dict[str, Row]] = {}
    current: dict[str, Row] | None = None
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"### (.+)", line)
        if heading:
            current = tables.setdefault(heading.group(1).strip(), {})
            continue
        cells = (
            [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        )
        if current is None or len(cells) < 3 or cells[0] in ("field", "---"):
            continue
        # "string\|number\|boolean" splits on the escaped pipes too; rejoin the type cell.
        raw = line.strip().strip("|").replace("\\|", "\u0000").split("|")
        path, types, presence = (c.strip().replace("\u0000", "|") for c in raw[:3])
        current[path.strip("`")] = Row(path.strip("`"), frozenset(types.split("|")), presence)
    return tables


def json_type(value: Any) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number"}
    if isinstance(value, str):
        return {"string"}
    if isinstance(value, list):
        return {"array"}
    return {"object"}


def check(value: Any, prefix: str, rows: dict[str, Row], seen: set[str], where: str) -> None:
    """Every field of ``value`` (an object at ``prefix``) is in ``rows`` with a matching
    type, and every *always* field whose parent is ``prefix`` is present."""
    assert isinstance(value, dict), where
    wildcard = f"{prefix}.*" if prefix else "*"
    for key, item in value.items():
        path = wildcard if wildcard in rows else (f"{prefix}.{key}" if prefix else key)
        assert path in rows, f"{where}: field {path!r} is not in docs/mcp-fields.md"
        row = rows[path]
        assert json_type(item) & row.types, f"{where}: {path} is {item!r}, table says {row.types}"
        seen.add(path)
        check_children(item, path, rows, seen, where)
    for path, row in rows.items():
        parent, _, name = path.rpartition(".")
        if parent == prefix and "[" not in name and name != "*" and row.presence == "always":
            assert name in value, f"{where}: {path} is marked always but is missing"


def check_children(item: Any, path: str, rows: dict[str, Row], seen: set[str], where: str) -> None:
    if isinstance(item, dict) and any(p.startswith(path + ".") for p in rows):
        check(item, path, rows, seen, where)
    elif isinstance(item, list):
        row = rows.get(f"{path}[]")
        for element in item:
            if row is not None:
                assert json_type(element) & row.types, f"{where}: {path}[] item {element!r}"
                seen.add(f"{path}[]")
            check_children(element, f"{path}[]", rows, seen, where)


def test_every_response_field_is_in_the_table_with_its_type(typed_run: TypedRun) -> None:
    tables = load_table()
    seen: dict[str, set[str]] = {tool: set() for tool in TOOLS}
    for tool, _args, text, is_error in typed_run.raw:
        if is_error:
            continue
        body = json.loads(text)
        rows = tables[f"{tool} output"]
        check(body, "", rows, seen[tool], f"{tool} response")
        if tool == "patch_block":
            for name, row in rows.items():
                if row.presence in ("ok", "error"):
                    wanted = (row.presence == "ok") == body["ok"]
                    assert (name in body) == wanted, f"patch_block: {name} presence"
    # Every row of every output table was exercised by at least one real response.
    for tool in TOOLS:
        missing = set(tables[f"{tool} output"]) - seen[tool]
        assert not missing, f"{tool}: rows never seen in a response: {sorted(missing)}"


def test_system_error_body_matches_the_table(typed_run: TypedRun) -> None:
    rows = load_table()["system error output"]
    seen: set[str] = set()
    check(json.loads(typed_run.extra["book"]), "", rows, seen, "book manifest error")
    assert seen == set(rows)


def test_input_fields_match_the_servers_input_schemas(typed_run: TypedRun) -> None:
    tables = load_table()
    for tool in TOOLS + ADDITIVE_TOOLS:
        schema = typed_run.schemas[tool]
        rows = {p: r for p, r in tables[f"{tool} input"].items() if "." not in p}
        assert set(rows) == set(schema["properties"]), tool
        for name, prop in schema["properties"].items():
            options = prop.get("anyOf", [prop])
            types = {o["type"] for o in options if "type" in o} - {"null"}
            required = name in schema.get("required", [])
            if not required:
                assert rows[name].presence == "optional", f"{tool}.{name} presence"
            assert types <= rows[name].types, f"{tool}.{name}: {types} vs {rows[name].types}"
            assert required == (rows[name].presence == "always"), f"{tool}.{name} required"


def check_response(tool: str, body: dict[str, Any]) -> set[str]:
    """One body of ``tool`` against its output table (used by the additive tools' tests)."""
    rows = load_table()[f"{tool} output"]
    seen: set[str] = set()
    check(body, "", rows, seen, f"{tool} response")
    for name, row in rows.items():
        if row.presence in ("ok", "error"):
            wanted = (row.presence == "ok") == body["ok"]
            assert (name in body) == wanted, f"{tool}: {name} presence"
    return seen
