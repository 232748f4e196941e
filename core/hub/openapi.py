"""``/openapi.json`` and ``/docs``: built from the route table and the pydantic models.

Request bodies are the §2 request models (path parameters removed from the body's required
list, since the path carries them); responses are the envelopes in `core.hub.wire`; every
operation lists the refusal shape under the statuses its codes can carry. The docs page is
plain HTML rendered from the same document (no script, nothing fetched from elsewhere).
"""

from __future__ import annotations

import html
import re
from typing import Any

from pydantic import BaseModel

from .. import __version__
from ..flow.errors import CODES
from . import projection_route, wire
from .route_spec import RouteSpec
from .routes import ROUTES

REF = "#/components/schemas/"
# Query parameters of the read routes other than the run lists.
QUERY: dict[str, tuple[tuple[str, str], ...]] = {
    "flows": (("scope", "string"), ("tag", "string")),
    "flow": (("version", "string"),),
    "proposals": (("status", "string"), ("kind", "string"), ("limit", "integer")),
}


def _schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, ref_template=REF + "{model}")
    for name, sub in schema.pop("$defs", {}).items():
        components.setdefault(name, sub)
    components.setdefault(model.__name__, schema)
    return {"$ref": REF + model.__name__}


def _body(spec: RouteSpec, components: dict[str, Any]) -> dict[str, Any] | None:
    if spec.request is None:
        return None
    params = set(re.findall(r"{(\w+)}", spec.path))
    schema = spec.request.model_json_schema(by_alias=True, ref_template=REF + "{model}")
    for name, sub in schema.pop("$defs", {}).items():
        components.setdefault(name, sub)
    schema["required"] = [r for r in schema.get("required", []) if r not in params]
    for name in params & set(schema.get("properties", {})):
        schema["properties"][name]["description"] = "optional here: the path carries it"
    name = f"{spec.request.__name__}Body"
    components[name] = schema
    return {"required": True, "content": {"application/json": {"schema": {"$ref": REF + name}}}}


def _operation(spec: RouteSpec, components: dict[str, Any]) -> dict[str, Any]:
    refusal = {"content": {"application/json": {"schema": {"$ref": REF + "Refusal"}}}}
    statuses = sorted({status for status, _, _ in CODES.values()})
    responses: dict[str, Any] = {
        str(spec.success): {
            "description": "the handler's record",
            "content": {"application/json": {"schema": _schema(spec.response, components)}},
        },
        "401": {
            "description": "no, wrong or revoked token (no detail)",
            "content": {"application/json": {"schema": {"$ref": REF + "Unauthorized"}}},
        },
    }
    for status in statuses:
        responses[str(status)] = {"description": "a refusal with its §8 code", **refusal}
    op: dict[str, Any] = {
        "operationId": spec.method.lower() + re.sub(r"[^a-z0-9]+", "_", spec.path).rstrip("_"),
        "summary": spec.summary,
        "parameters": [
            {"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
            for p in re.findall(r"{(\w+)}", spec.path)
        ],
        "responses": responses,
    }
    body = _body(spec, components)
    if body is not None:
        op["requestBody"] = body
    if spec.action == "list":
        if "{flow_id}" not in spec.path:
            op["parameters"].append(
                {"name": "flow_id", "in": "query", "required": False, "schema": {"type": "string"}}
            )
        op["parameters"] += [
            {"name": n, "in": "query", "required": False, "schema": {"type": t}}
            for n, t in (
                ("status", "string"),
                ("task_ref", "string"),
                ("limit", "integer"),
                ("cursor", "string"),
            )
        ]
    op["parameters"] += [
        {"name": n, "in": "query", "required": False, "schema": {"type": t}}
        for n, t in (*spec.query, *QUERY.get(spec.action, ()))
    ]
    if spec.action == projection_route.ACTION:
        op["parameters"] += projection_route.parameters()
    if spec.gate != "none":
        op["description"] = (
            "Behind the "
            + ("run-write" if spec.gate == "writes" else "automatable-execution")
            + " sub-gate (off by default)."
        )
    return op


def openapi_document() -> dict[str, Any]:
    components: dict[str, Any] = {}
    _schema(wire.Refusal, components)
    _schema(wire.Unauthorized, components)
    paths: dict[str, Any] = {}
    for spec in ROUTES:
        paths.setdefault(spec.path, {})[spec.method.lower()] = _operation(spec, components)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Noma team hub",
            "version": __version__,
            "description": "Flow definitions and proposals (Flow v0 §3.3), flow runs over "
            "HTTP (execution gate 7A-L3 §2) and the Skills "
            "Protocol at POST /rpc. Send `Authorization: Bearer <token>`.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }


def docs_html(document: dict[str, Any]) -> str:
    """A readable page of every route, its request fields and its refusal codes."""
    esc = html.escape
    rows = []
    schemas = document["components"]["schemas"]
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            fields = ""
            body = op.get("requestBody")
            if body is not None:
                name = body["content"]["application/json"]["schema"]["$ref"].removeprefix(REF)
                schema = schemas[name]
                required = set(schema.get("required", []))
                fields = ", ".join(
                    f"<code>{esc(f)}</code>{'' if f in required else '?'}"
                    for f in schema.get("properties", {})
                )
            rows.append(
                f"<tr><td><b>{esc(method.upper())}</b></td><td><code>{esc(path)}</code></td>"
                f"<td>{esc(op['summary'])}</td><td>{fields}</td></tr>"
            )
    codes = "".join(
        f"<tr><td><code>{esc(code)}</code></td><td>{status}</td><td>{esc(when)}</td></tr>"
        for code, (status, _, when) in CODES.items()
    )
    info = document["info"]
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{esc(info['title'])}</title><style>body{{font-family:sans-serif;"
        "max-width:70em;margin:2em auto}td{padding:.2em .6em;vertical-align:top}"
        "tr:nth-child(even){background:#f4f4f4}</style></head><body>"
        f"<h1>{esc(info['title'])} {esc(info['version'])}</h1><p>{esc(info['description'])}</p>"
        "<p>Machine-readable: <a href='/openapi.json'>/openapi.json</a>.</p>"
        "<h2>Routes</h2><table><tr><th></th><th>path</th><th>what</th><th>body</th></tr>"
        + "".join(rows)
        + "</table><h2>Refusal codes</h2><table><tr><th>code</th><th>status</th><th>when"
        "</th></tr>" + codes + "</table></body></html>"
    )
