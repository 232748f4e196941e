"""Dismissal that is safe to ask for twice (issue 25).

Textual's `Screen.dismiss` pops whatever screen is on top, and a second call on a screen
already gone raises (`InvalidStateError`, or pops the editor's parent). A burst can ask
twice (``y y``, ``Esc Esc``, an apply landing while the discard question is up), so every
dialog closes through `DismissOnce`: only the first dismissal of a screen that is on top
does anything; later ones are no-ops.
"""

from __future__ import annotations

from typing import Generic

from textual.await_complete import AwaitComplete
from textual.screen import ScreenResultType

from .dialog import Dialog


class DismissOnce(Dialog[ScreenResultType], Generic[ScreenResultType]):
    """A modal whose `dismiss` acts once, and only while it is the top screen."""

    _dismissed = False

    @property
    def dismissed(self) -> bool:
        return self._dismissed

    def can_dismiss(self) -> bool:
        """True when a dismissal now would close this screen and nothing else."""
        return not self._dismissed and self.is_attached and self.app.screen is self

    def dismiss(self, result: ScreenResultType | None = None) -> AwaitComplete:
        if not self.can_dismiss():
            return AwaitComplete.nothing()  # type: ignore[no-untyped-call,no-any-return]
        self._dismissed = True
        return super().dismiss(result)

    def pop_quietly(self) -> None:
        """Close without a result (its callback is not called), once, if on top."""
        if self.can_dismiss():
            self._dismissed = True
            self.app.pop_screen()
