"""The footer, rebuilt only when what it shows changes.

Textual's footer recomposes (a new key widget per binding, each styled anew) on every
``bindings_updated`` signal of its screen, and the screen sends one for each focus change
and each mount. Starting the app sent ~15 of them, and the footer's rebuilds with their
styling were ~0.5 s of the ~1.2 s the app took to show a document; every pane switch paid
one more. Here the requests of one frame are folded into one, and the footer is recomposed
only when the keys it would show (key, label, tooltip) differ from what it shows.

A change of only which keys are enabled (the selection moved to a block another action
applies to, a document finished loading) marks each key enabled or disabled in place instead:
the same look as a rebuild, without unmounting and styling every key again.

Each key widget is also born with the footer's ``compact`` value: Textual's start as
compact and are switched back by their data binding once mounted, two style updates per
key (~2 ms each) for a class that ends where it began.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.binding import ActiveBinding

    Active = dict[str, ActiveBinding]  # a screen's `active_bindings`

__all__ = ["Footer"]


class Footer(TextualFooter):
    """A drop-in `textual.widgets.Footer` that skips rebuilds showing the same keys."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[tuple[object, ...], tuple[bool, ...]] | None = None
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
        active = self.screen.active_bindings  # each read asks every binding's check_action
        shown = self._keys_shown(active)
        if shown == self._shown:
            return
        before, self._shown = self._shown, shown
        if before is not None and before[0] == shown[0] and self._enable_in_place(active):
            return
        await self.recompose()

    def _keys_shown(self, active: Active) -> tuple[tuple[object, ...], tuple[bool, ...]]:
        """Everything `Footer.compose` reads, in the order it reads it: what decides which
        key widgets there are, and apart from it which of them are enabled."""
        layout: list[object] = [self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE]
        enabled: list[bool] = []
        for _node, binding, on, tooltip in active.values():
            if binding.show:
                group = binding.group
                layout.append(
                    (
                        binding.key,
                        self.app.get_key_display(binding),
                        binding.description,
                        binding.action,
                        tooltip,
                        binding.tooltip,
                        None if group is None else (group.description, group.compact),
                    )
                )
                enabled.append(on)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        layout.append(None if palette is None else (palette[1].key, palette[3]))
        enabled.append(palette is not None and palette[2])
        return tuple(layout), tuple(enabled)

    def _enable_in_place(self, active: Active) -> bool:
        """Mark each key widget enabled or disabled as `Footer.compose` would make it (the first
        shown binding of its action decides); False, changing nothing, if a widget's
        action has no binding (then the footer is rebuilt)."""
        first: dict[str, bool] = {}
        for _node, binding, on, _tooltip in active.values():
            if binding.show:
                first.setdefault(binding.action, on)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        keys = list(self.query(FooterKey))
        wanted: list[bool] = []
        for key in keys:
            if key.has_class("-command-palette"):
                if palette is None:
                    return False
                wanted.append(palette[2])
            elif key.action in first:
                wanted.append(first[key.action])
            else:
                return False
        for key, on in zip(keys, wanted, strict=True):
            # What `FooterKey.__init__` does with its ``disabled`` argument: a dimmed look
            # and a click that only rings the bell (not the widget's own ``disabled``).
            key._disabled = not on
            key.set_class(not on, "-disabled")
        return True
