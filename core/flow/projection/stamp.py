"""What a written projection carries so a later run can tell it apart from a hand edit.

A written file is the rendered text plus a stamp: the flows (id and version) it came
from and the sha256 of the rendered text. Markdown files end with one HTML comment line
(front matter must stay first); JSON files hold the stamp under one extra top-level key.
Reading it back (`inspect`) re-hashes what the file says now: a mismatch is drift (§4: a
hand edit is never a source), a file without a valid stamp is foreign (not ours). Both are
kept unless the user forces a rewrite. The stamp is hostile input like any workspace file:
it is parsed strictly and validated, and a bad one only makes the file foreign.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ... import strict_json
from ..ids import sha256_hex
from .structured import dump

STAMP_KEY = "noma_flow_projection"
_TRAILER = re.compile(r"<!-- noma-flow-projection (\{[^\n]*\}) -->")
MAX_FILE_BYTES = 8 * 1024 * 1024


class StampedFlow(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    flow_id: Annotated[str, Field(pattern=r"^flow_[a-z0-9_]{1,64}$")]
    flow_version: Annotated[str, Field(pattern=r"^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}$")]


class Stamp(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    harness: Literal[
        "cursor_rule", "cursor_skill", "mcp_prompt", "cli_runbook", "agent_bundle", "agents_md"
    ]
    flows: Annotated[list[StampedFlow], Field(max_length=100_000)]
    content_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass(frozen=True, slots=True)
class Inspection:
    """A file read back: its stamp (None when foreign) and whether its content drifted."""

    stamp: Stamp | None
    drift: bool

    @property
    def foreign(self) -> bool:
        return self.stamp is None


FOREIGN = Inspection(None, False)


def stamp_for(harness: str, flows: list[tuple[str, str]], rendered: str) -> Stamp:
    return Stamp(
        harness=harness,  # type: ignore[arg-type]
        flows=[StampedFlow(flow_id=f, flow_version=v) for f, v in flows],
        content_sha256=sha256_hex(rendered),
    )


def stamped(stamp: Stamp, rendered: str, is_json: bool) -> bytes:
    """The bytes written for ``rendered`` (deterministic: same input, same bytes)."""
    meta = stamp.to_json()
    if is_json:
        data = json.loads(rendered)
        return dump({STAMP_KEY: meta, **data}).encode("utf-8")
    compact = json.dumps(meta, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return (rendered + f"<!-- noma-flow-projection {compact} -->\n").encode("utf-8")


def inspect(data: bytes) -> Inspection:
    """Read a file's stamp and check its content against it."""
    if len(data) > MAX_FILE_BYTES:
        return FOREIGN
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FOREIGN
    if text.lstrip().startswith("{"):
        return _inspect_json(data)
    return _inspect_markdown(text)


def _inspect_markdown(text: str) -> Inspection:
    """The last stamp line is ours (we append it); anything around it is the content, so
    a line added after the stamp is drift too."""
    lines = text.split("\n")
    for index in range(len(lines) - 1, -1, -1):
        match = _TRAILER.fullmatch(lines[index])
        if match is not None:
            break
    else:
        return FOREIGN
    stamp = _stamp(match.group(1))
    if stamp is None:
        return FOREIGN
    rest = "\n".join(lines[:index] + lines[index + 1 :])
    return Inspection(stamp, sha256_hex(rest) != stamp.content_sha256)


def _inspect_json(data: bytes) -> Inspection:
    try:
        value = strict_json.loads(data)
    except strict_json.NotJsonText:
        return FOREIGN
    if not isinstance(value, dict) or not isinstance(value.get(STAMP_KEY), dict):
        return FOREIGN
    stamp = _stamp(value.pop(STAMP_KEY))
    if stamp is None:
        return FOREIGN
    return Inspection(stamp, sha256_hex(dump(value)) != stamp.content_sha256)


def _stamp(raw: Any) -> Stamp | None:
    try:
        if isinstance(raw, str):
            raw = strict_json.loads(raw)
        return Stamp.model_validate(raw)
    except (strict_json.NotJsonText, ValidationError):
        return None
