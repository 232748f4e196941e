"""The eight LLM tools of the Skills Protocol, exported for OpenAI and Anthropic tool use.

The schemas are the spec's, word for word (a test compares them with the spec text). The
provider formats differ only in their envelope: OpenAI wraps a ``function`` with
``parameters``; Anthropic uses ``input_schema``.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

ToolFormat = Literal["openai", "anthropic"]

# Appendix A of the Skills Protocol: the snippet a client puts in the LLM's system prompt
# (the spec's text, line for line; a test compares it with the spec), so a model that has
# the tools also knows to read the guide before using them.
SYSTEM_PROMPT = """\
You are connected to a Skills Runtime using the Skills Protocol.

If you have not yet read the Skills Protocol Guide,
you MUST call the `load_skills_protocol_guide` tool before using
any other Skills Protocol tools.

After reading the guide, follow its workflow:
discover \u2192 inspect \u2192 run or write code \u2192 use blobs for large data.
"""

_STRING = {"type": "string"}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "list_skills",
        "description": "Enumerate available skills, optionally filtering by namespace. "
        "Results are deterministically sorted.",
        "parameters": {
            "type": "object",
            "properties": {
                "namespace": {
                    "type": "string",
                    "description": "Optional namespace to filter skills (e.g., 'salesforce')",
                },
                "detail": {
                    "type": "string",
                    "enum": ["names", "summary"],
                    "default": "names",
                    "description": "Level of detail to return",
                },
                "limit": {
                    "type": "integer",
                    "default": 50,
                    "description": "Maximum number of results",
                },
                "cursor": {
                    "type": "string",
                    "description": "Pagination cursor from previous response",
                },
            },
        },
    },
    {
        "name": "describe_skill",
        "description": "Retrieve a skill's manifest and documentation frontmatter.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "Skill name (e.g., 'salesforce.leads.sync')",
                },
                "version": {
                    "type": "string",
                    "description": "Skill version (omit for latest)",
                },
                "detail": {
                    "type": "string",
                    "enum": ["manifest", "summary", "full"],
                    "default": "summary",
                    "description": "Level of detail to return",
                },
            },
            "required": ["name"],
        },
    },
    {
        "name": "read_skill_file",
        "description": "Read any file in a skill's directory (e.g., SKILL.md, extra docs, "
        "schemas).",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Skill name"},
                "version": {
                    "type": "string",
                    "description": "Skill version (omit for latest)",
                },
                "path": {
                    "type": "string",
                    "description": "Path to file within skill directory (e.g., 'SKILL.md')",
                },
            },
            "required": ["name", "path"],
        },
    },
    {
        "name": "execute_skill",
        "description": "Execute a skill's entrypoint in an ephemeral sandbox.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Skill name"},
                "version": {
                    "type": "string",
                    "description": "Skill version (omit for latest)",
                },
                "args": {
                    "type": "object",
                    "description": "JSON-serializable arguments to pass to the skill",
                },
                "input_blobs": {
                    "type": "array",
                    "items": dict(_STRING),
                    "description": "Blob IDs to mount in the sandbox",
                },
                "timeout_ms": {
                    "type": "integer",
                    "description": "Execution timeout in milliseconds",
                },
            },
            "required": ["name"],
        },
    },
    {
        "name": "run_code",
        "description": "Execute LLM-written code in a sandbox with specified skills and "
        "blobs mounted.",
        "parameters": {
            "type": "object",
            "properties": {
                "language": {
                    "type": "string",
                    "enum": ["python"],
                    "description": "Programming language (MVP: python only)",
                },
                "code": {"type": "string", "description": "Source code to execute"},
                "entrypoint": {
                    "type": "string",
                    "default": "main",
                    "description": "Function name to call",
                },
                "args": {
                    "type": "object",
                    "description": "Arguments to pass to entrypoint function",
                },
                "mount_skills": {
                    "type": "array",
                    "items": dict(_STRING),
                    "description": "Skill names to mount in sandbox",
                },
                "input_blobs": {
                    "type": "array",
                    "items": dict(_STRING),
                    "description": "Blob IDs to mount in sandbox",
                },
                "limits": {
                    "type": "object",
                    "properties": {"timeout_ms": {"type": "integer"}},
                    "description": "Execution limits",
                },
            },
            "required": ["language", "code"],
        },
    },
    {
        "name": "create_blob",
        "description": "Store large content as a blob and return its ID.",
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "Content to store"},
                "kind": {
                    "type": "string",
                    "description": "MIME type (e.g., 'text/plain', 'application/json')",
                },
            },
            "required": ["content", "kind"],
        },
    },
    {
        "name": "read_blob",
        "description": "Retrieve a preview of blob content. Full reads discouraged for large "
        "blobs.",
        "parameters": {
            "type": "object",
            "properties": {
                "blob_id": {"type": "string", "description": "Blob identifier"},
                "mode": {
                    "type": "string",
                    "enum": ["sample_head", "sample_tail", "full"],
                    "default": "sample_head",
                    "description": "How to sample the blob",
                },
                "max_bytes": {
                    "type": "integer",
                    "default": 2000,
                    "description": "Maximum bytes to return",
                },
            },
            "required": ["blob_id"],
        },
    },
    {
        "name": "load_skills_protocol_guide",
        "description": "Load the Skills Protocol Guide to learn how to use these tools. Call "
        "this first if you haven't read the guide yet.",
        "parameters": {"type": "object", "properties": {}},
    },
]


def export_tools(fmt: ToolFormat) -> list[dict[str, Any]]:
    """The tool list in a provider's tool-definition format (fresh copies)."""
    tools = copy.deepcopy(TOOLS)
    if fmt == "openai":
        return [{"type": "function", "function": tool} for tool in tools]
    if fmt == "anthropic":
        return [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
            for t in tools
        ]
    raise ValueError(f"unknown tool format {fmt!r} (expected 'openai' or 'anthropic')")
