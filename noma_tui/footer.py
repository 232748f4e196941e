"""The footer, rebuilt only when what it shows changes.

Textual's footer recomposes (a new key widget per binding, each styled anew) on every
``bindings_updated`` signal of its screen, and the screen sends one for each focus change
and each mount. Starting the app sent ~15 of them, and the footer's rebuilds with their
styling were ~0.5 s of the ~1.2 s the app took to show a document; every pane switch paid
one more. Here the requests of one frame are folded into one, and the footer is recomposed
only when the keys it would show (key, label, enabled, tooltip) differ from what it shows.

Each key widget is also born with the footer's ``compact`` value: Textual's start as
compact and are switched back by their data binding once mounted, two style updates per
key (~2 ms each) for a class that ends where it began.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

__all__ = ["Footer"]


class Footer(TextualFooter):
    """A drop-in `textual.widgets.Footer` that skips rebuilds showing the same keys."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[object, ...] | None = None
        self._asked = False

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            # Only the keys bound to the footer's value (not the palette's, which keeps
            # Textual's own compact look).
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._asked:
            self._asked = True  # one rebuild for every request made before the next frame
            self.call_after_refresh(self._rebuild_if_changed)

    async def _rebuild_if_changed(self) -> None:
        self._asked = False
        if not self.is_attached:
            return
        shown = self._keys_shown()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()

    def _keys_shown(self) -> tuple[object, ...]:
        """Everything `Footer.compose` reads, in the order it reads it."""
        keys: list[object] = [self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE]
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show:
                group = binding.group
                keys.append(
                    (
                        binding.key,
                        self.app.get_key_display(binding),
                        binding.description,
                        binding.action,
                        enabled,
                        tooltip,
                        binding.tooltip,
                        None if group is None else (group.description, group.compact),
                    )
                )
        palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        keys.append(None if palette is None else (palette[1].key, palette[2], palette[3]))
        return tuple(keys)
