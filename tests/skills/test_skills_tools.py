"""The LLM tool schemas: exactly the spec's, in OpenAI and Anthropic envelopes, via the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from skills_testlib import REPO, spec_text

from core.skills_runtime import wire
from core.skills_runtime.tool_schemas import TOOLS, export_tools


def spec_tool_schemas() -> list[dict]:
    text = spec_text()
    section = text[text.index("Tool Schemas") : text.index("Python Client Example")]
    decoder = json.JSONDecoder()
    tools, pos = [], 0
    while (start := section.find('{\n  "name"', pos)) != -1:
        obj, end = decoder.raw_decode(section, start)
        tools.append(obj)
        pos = end
    return tools


def test_schemas_are_the_specs_word_for_word() -> None:
    assert spec_tool_schemas() == TOOLS
    assert [t["name"] for t in TOOLS] == [
        "list_skills",
        "describe_skill",
        "read_skill_file",
        "execute_skill",
        "run_code",
        "create_blob",
        "read_blob",
        "load_skills_protocol_guide",
    ]


@pytest.mark.parametrize(
    ("tool", "model"),
    [
        ("list_skills", wire.ListSkillsParams),
        ("describe_skill", wire.DescribeSkillParams),
        ("read_skill_file", wire.ReadSkillFileParams),
        ("execute_skill", wire.ExecuteSkillParams),
        ("run_code", wire.RunCodeParams),
        ("create_blob", wire.CreateBlobParams),
        ("read_blob", wire.ReadBlobParams),
        ("load_skills_protocol_guide", wire.EmptyParams),
    ],
)
def test_wire_models_accept_exactly_the_schema_fields(tool: str, model: type) -> None:
    schema = next(t for t in TOOLS if t["name"] == tool)["parameters"]
    assert set(model.model_fields) == set(schema["properties"])
    required = {n for n, f in model.model_fields.items() if f.is_required()}
    assert required == set(schema.get("required", []))


def test_openai_and_anthropic_envelopes() -> None:
    openai = export_tools("openai")
    anthropic = export_tools("anthropic")
    assert openai[0] == {"type": "function", "function": TOOLS[0]}
    assert anthropic[0] == {
        "name": "list_skills",
        "description": TOOLS[0]["description"],
        "input_schema": TOOLS[0]["parameters"],
    }
    openai[0]["function"]["name"] = "mutated"
    assert TOOLS[0]["name"] == "list_skills"  # exports are copies
    with pytest.raises(ValueError):
        export_tools("gemini")  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_cli_prints_the_tools(fmt: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "core.cli", "skills", "tools", "--format", fmt],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == export_tools(fmt)  # type: ignore[arg-type]


def test_cli_module_imports_only_argparse() -> None:
    probe = (
        "import sys\nimport core.commands.skills\n"
        "print(sorted(m for m in ('starlette', 'uvicorn', 'pydantic', 'sandbox') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_cli_register_adds_skills_serve_and_tools() -> None:
    import argparse

    from core.commands.skills import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["skills", "serve", "--port", "9999", "--workspace", "/tmp"])
    assert (args.host, args.port, args.workspace) == ("127.0.0.1", 9999, "/tmp")
    assert callable(args.func)
    assert parser.parse_args(["skills", "tools", "--format", "anthropic"]).format == "anthropic"


def spec_system_prompt() -> str:
    text = spec_text()
    start = text.index("include this snippet in the system prompt:")
    body = text[text.index("\n", start) : text.index("Appendix B: Minimal Example")]
    return body.strip("\n") + "\n"


def test_system_prompt_is_appendix_a_word_for_word() -> None:
    from core.skills_runtime.tool_schemas import SYSTEM_PROMPT

    assert spec_system_prompt() == SYSTEM_PROMPT
    assert SYSTEM_PROMPT.startswith("You are connected to a Skills Runtime")
    assert "`load_skills_protocol_guide`" in SYSTEM_PROMPT


def test_cli_prints_the_system_prompt_and_readme_carries_it() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "core.cli", "skills", "tools", "--system-prompt"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == spec_system_prompt()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert spec_system_prompt() in readme
