"""The status bar: the open document, its hash and counts, the open edit and its drift.

``base_sha_drift`` appears here (as a word, not only a colour) while an edit is open and
the file on disk no longer matches the version the edit started from. ``[restricted]``
appears while the folder is untrusted and asks for something trust keeps off (`core.trust`;
the trust screen, ``T``, says what and why).
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ..styles import SEVERITY_GLYPH, Themed
from ..visible import plain


class StatusBar(Themed, Static):
    doc_name: reactive[str] = reactive("")
    sha: reactive[str] = reactive("")
    errors: reactive[int] = reactive(0)
    warnings: reactive[int] = reactive(0)
    checking: reactive[bool] = reactive(False)  # validation still running: no counts yet
    editing: reactive[str] = reactive("")
    drift: reactive[bool] = reactive(False)
    message: reactive[str] = reactive("")
    read_only: reactive[bool] = reactive(False)
    restricted: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)

    def restyle(self) -> None:
        self.refresh()

    def watch_drift(self, drift: bool) -> None:
        self.set_class(drift, "-drift")

    def render(self) -> Text:
        p = self.palette
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.restricted:
            text.append("[restricted] ", p.warning)
        if not self.doc_name:
            text.append(plain(self.message or "No document open."))
            return text
        text.append(plain(self.doc_name), style="bold")
        if self.read_only:
            text.append(" [read-only]", p.warning)
        text.append(f"  sha {self.sha[:8]}")
        if self.checking:
            text.append("  checking…", p.muted)
        else:
            text.append(f"  {SEVERITY_GLYPH['error']}{self.errors}", p.error if self.errors else "")
            text.append(
                f" {SEVERITY_GLYPH['warning']}{self.warnings}", p.warning if self.warnings else ""
            )
        if self.editing:
            text.append(f"  │ editing {plain(self.editing)}")
        if self.drift:
            text.append("  ⚠ base_sha_drift: file changed on disk since the edit opened", p.drift)
        elif self.message:
            text.append(f"  │ {plain(self.message)}")
        return text
