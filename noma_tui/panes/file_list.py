"""The workspace file list: every ``.noma`` document, the open one marked.

Choosing one (Enter or click) asks the app to open it; the list is refreshed when the
watcher sees documents appear or disappear.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..typeahead import Until, gate_of
from ..visible import plain
from .scrollbars import ThumbFollowsScroll


class FileList(ThumbFollowsScroll, OptionList):
    class Open(Message):
        def __init__(self, pane: FileList, path: Path, keys: Until | None = None) -> None:
            super().__init__()
            self.pane = pane
            self.path = path
            self.keys = keys  # holds the keys typed after Enter until the document shows

        @property
        def control(self) -> FileList:
            return self.pane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.paths: list[Path] = []
        self.current: Path | None = None
        self.root: Path | None = None
        self._keys: Until | None = None

    def set_files(self, paths: list[Path], root: Path, current: Path | None) -> None:
        if paths == self.paths and current == self.current and root == self.root:
            return
        self.paths, self.root, self.current = list(paths), root, current
        highlighted = self.highlighted
        self.clear_options()
        options = []
        for path in paths:
            try:
                name = path.relative_to(root).as_posix()
            except ValueError:
                name = path.name
            mark = "▸ " if path == current else "  "
            options.append(Option(Text(mark + plain(name)), id=str(path)))  # a name, not markup
        self.add_options(options)
        if current in paths:
            self.highlighted = paths.index(current)
        elif highlighted is not None and paths:
            self.highlighted = min(highlighted, len(paths) - 1)
        self.border_subtitle = f"{len(paths)} document(s)"

    def action_select(self) -> None:
        """Enter: the keys typed after it wait until the chosen document is shown (the
        app releases them), so ``e`` after Enter edits the new document, not the old."""
        gate = gate_of(self)
        if gate is not None and self.highlighted is not None:
            self._keys = Until(lambda: self.is_attached)
            gate.hold(self._keys)
        super().action_select()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        keys, self._keys = self._keys, None
        if event.option.id is not None:
            self.post_message(self.Open(self, Path(event.option.id), keys))
        elif keys is not None and (gate := gate_of(self)) is not None:
            gate.release(keys)
