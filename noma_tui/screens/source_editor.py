"""Editing source text: a block's body (``replace_body``), its whole source
(``replace_block``) or a new block from a template (``add_block``).

The text area holds exactly what the op will carry as ``content``; the engine decides
whether it parses to one directive block and the proof shows the result first.
"""

from __future__ import annotations

from typing import Any, Literal

from textual.app import ComposeResult
from textual.widgets import TextArea

from .. import ops
from ..document import LoadedDocument
from ..keyorder import OrderedTextArea
from ..merge import ConflictTexts
from ..session import EditSession
from .edit_base import EditScreen
from .mounted import composed

Mode = Literal["replace_body", "replace_block", "add_block"]


class SourceEditorScreen(EditScreen):
    def __init__(
        self,
        session: EditSession,
        title: str,
        *,
        mode: Mode,
        text: str,
        block_id: str,
        position: int | None = None,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__(session, title)
        self.mode = mode
        self.initial = text
        self.opened_text = text  # the base of a three-way merge
        self.block_id = block_id  # the block edited, or the parent for add_block
        self.position = position
        self.cursor_blink = cursor_blink

    def compose_fields(self) -> ComposeResult:
        area = OrderedTextArea(
            self.initial,
            id="source",
            soft_wrap=True,
            show_line_numbers=True,
            tab_behavior="indent",
        )
        area.cursor_blink = self.cursor_blink
        yield area

    @composed
    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#source", TextArea).focus()

    @property
    def text(self) -> str:
        return self.query_one("#source", TextArea).text

    def dirty(self) -> bool:
        return self.text != self.initial

    def build_ops(self) -> list[dict[str, Any]] | None:
        text = self.text
        if self.mode == "replace_body":
            return [ops.replace_body(self.block_id, text)]
        if not text.strip():
            self.notify("The block source is empty.", title="invalid_content", severity="error")
            return None
        if self.mode == "replace_block":
            return [ops.replace_block(self.block_id, text)]
        return [ops.add_block(self.block_id, text, self.position)]

    def _unit(self, loaded: LoadedDocument) -> str | None:
        """What this editor edits (the body, or the whole block) as it is in ``loaded``."""
        block = self.session.current_block(loaded)
        if block is None:
            return None
        if self.mode == "replace_body":
            return loaded.body_text(block)
        return loaded.block_text(block).replace("\r", "")

    def conflict_texts(self, loaded: LoadedDocument) -> ConflictTexts | None:
        if self.mode == "add_block":
            return None
        theirs = self._unit(loaded)
        if theirs is None:
            return None
        return ConflictTexts(self.opened_text, self.text, theirs, True)

    def take_merge(self, text: str, base: str) -> None:
        self.opened_text = self.initial = base  # theirs is the base from now on
        self.query_one("#source", TextArea).load_text(text)

    def reload_block(self, loaded: LoadedDocument) -> None:
        if self.mode == "add_block":
            return  # the new block's text is the user's; only the parent's hash moved on
        block = self.session.current_block(loaded)
        if block is None:
            return
        fresh = loaded.body_text(block) if self.mode == "replace_body" else loaded.block_text(block)
        self.initial = self.opened_text = fresh.replace("\r", "")
        self.query_one("#source", TextArea).load_text(self.initial)
