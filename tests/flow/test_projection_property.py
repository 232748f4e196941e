"""Security tier, as a property: whatever a flow's text holds (line breaks, backticks,
heading marks, front matter fences, forged stamps, controls, bidi overrides), every
projection keeps its shape: one heading per step, front matter that parses to exactly its
keys, JSON that parses, no raw control characters in Markdown; and a written projection
reads back as current, while any change to it reads back as drift."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from core.flow.models import FlowBundle
from core.flow.projection.harness import HARNESSES
from core.flow.projection.record import JSON_HARNESSES, RENDERERS
from core.flow.projection.stamp import inspect, stamp_for, stamped

from .conftest import bundle, step

PIECES = st.sampled_from(
    [
        "\n",
        "\r\n",
        "\r",
        "`",
        "```",
        "# ",
        "## 9. ",
        "---",
        "- ",
        "<!-- noma-flow-projection ",
        ' {"harness":"cursor_rule"} -->',
        "\x1b[2J",
        "\x07",
        "\u202e",
        "\u2028",
        "\ufffe",
        '"',
        "\\",
        ": ",
        "→",
        "😀",
    ]
)
TEXT = (
    st.lists(st.one_of(PIECES, st.text(min_size=1, max_size=8)), min_size=1, max_size=12)
    .map("".join)
    .filter(lambda t: bool(t.strip()))
)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def step_headings(markdown: str) -> list[str]:
    """Heading lines outside fenced code (a shell block's line is not one)."""
    out, fence = [], None
    for ln in markdown.split("\n"):
        if fence is not None:
            fence = None if ln == fence else fence
            continue
        opener = re.fullmatch(r"(`{3,})sh", ln)
        if opener is not None:
            fence = opener.group(1)
        elif ln.startswith("#"):
            out.append(ln)
    return out


def one_line(text: str) -> str:
    """Names and ids are printable single lines (the model refuses controls in them)."""
    return re.sub("[\x00-\x1f\x7f]", "", " ".join(text.split())) or "x"


def hostile_bundle(title: str, summary: str, texts: list[str]) -> FlowBundle:
    f = "flow_prop"
    steps = []
    for i, text in enumerate(texts, start=1):
        s = step(f, i, instruction=text, when_not_to_run=text)
        s["owned_job"] = text
        s["boundaries"] = [text, "Stay in scope."]
        s["skill_refs"] = [{"kind": "cli", "id": one_line(text)}]
        steps.append(s)
    data: dict[str, Any] = bundle(f, steps, title=one_line(title))
    data["flow"]["summary"] = summary
    return FlowBundle.model_validate(data)


@settings(max_examples=60, deadline=None, database=None)
@given(title=TEXT, summary=TEXT, texts=st.lists(TEXT, min_size=1, max_size=4))
def test_no_flow_text_reshapes_a_projection_or_its_stamp(
    title: str, summary: str, texts: list[str]
) -> None:
    flow = hostile_bundle(title, summary, texts)
    for harness in HARNESSES:
        rendered = RENDERERS[harness](flow)
        if harness in JSON_HARNESSES:
            data = json.loads(rendered)
            if harness == "mcp_prompt":
                text = data["messages"][0]["content"]["text"]
            else:
                assert [s["instruction"] for s in data["steps"]] == texts  # lossless
                text = None
        else:
            text = rendered
            if harness != "cli_runbook":
                head = rendered.split("\n---\n", 1)[0].removeprefix("---\n")
                meta = yaml.safe_load(head)
                keys = {"cursor_rule": {"description", "globs", "alwaysApply"}}
                assert set(meta) == keys.get(harness, {"name", "description"})
                assert meta.get("alwaysApply") in (None, False)
        if text is not None:
            assert not CONTROL.search(text.replace("\n", "").replace("\t", ""))
            headings = step_headings(text)  # the title, then one per step: nothing else
            assert len(headings) == 1 + len(texts) and headings[0].startswith("# ")
            assert all(re.match(r"## \d+\. ", h) for h in headings[1:])
        stamp = stamp_for(harness, [(flow.flow_id, flow.version)], rendered)
        written = stamped(stamp, rendered, is_json=harness in JSON_HARNESSES)
        seen = inspect(written)
        assert seen.stamp == stamp and not seen.drift
        if harness not in JSON_HARNESSES:
            edited = written.replace(b"\n", b"\n ", 1)  # any change to the content
            assert inspect(edited).drift or inspect(edited).foreign
