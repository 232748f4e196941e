"""Type-ahead kept: keys typed while a dialog is opening wait for it, then reach it in order.

Textual hands each key to the widget focused *when the key is dispatched*. A key that
opens a dialog (``a``, ``d``, ``u``, ``g``…) pushes a screen that mounts and takes focus
only on later turns of the event loop, so the rest of a burst (a fast typist, a paste
without bracketed paste, ``tmux send-keys``) used to land on the main screen behind it,
where ``n``, ``e`` or ``r`` open other edits. The gate closes that window:

- the keys that open dialogs are priority bindings, so their action runs at dispatch time,
  before the next key is looked at;
- while something the user asked for is being prepared (a dialog mounting, a proof being
  built for an edit that has no editor of its own, an undo being computed), every key that
  arrives from the terminal is kept here instead of being dispatched;
- once the dialog is ready (its screen has handled its resume, so its field has focus) or
  the request ended without one (refused, nothing to undo), the kept keys are dispatched
  one by one, in order, exactly as if they had arrived then. A kept key that opens another
  dialog closes the gate again and the rest waits for that one.

Holding is keyed by a token (the screen, the edit session, the undone record), so a late
release for something already superseded does nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable

from textual import events

Dispatch = Callable[[events.Key], Awaitable[None]]
Schedule = Callable[..., object]


class KeyGate:
    """Holds terminal keys while ``token`` (what the user is waiting for) is not ready."""

    def __init__(
        self, dispatch: Dispatch, schedule: Schedule, alive: Callable[[object], bool]
    ) -> None:
        self._dispatch = dispatch  # the app's own key handling (bindings, focus)
        self._schedule = schedule  # runs a coroutine on the app's queue, after what is there
        self._alive = alive  # False: what was waited for is gone (a screen closed early)
        self._kept: deque[events.Key] = deque()
        self._token: object | None = None
        self._draining = False

    @property
    def holding(self) -> bool:
        return self._token is not None

    @property
    def idle(self) -> bool:
        """Nothing held, kept or being handed on (tests wait on it, never on time)."""
        return self._token is None and not self._draining and not self._kept

    @property
    def kept(self) -> int:
        """Keys waiting (tests and the status line read it)."""
        return len(self._kept)

    def intercepts(self) -> bool:
        """True when a key arriving now must wait its turn."""
        if self._token is not None and not self._alive(self._token):
            self.release(self._token)
        return self._token is not None or self._draining or bool(self._kept)

    def keep(self, event: events.Key) -> None:
        self._kept.append(event)

    def hold(self, token: object) -> None:
        """Keys wait until ``token`` is released (a new hold replaces an older one)."""
        self._token = token

    def release(self, token: object | None = None) -> None:
        """``token`` is ready (or gave up): hand the kept keys on. ``None`` releases
        whatever is held (an error path that cannot know what was waiting)."""
        if self._token is None or (token is not None and token is not self._token):
            return
        self._token = None
        if self._kept and not self._draining:
            self._draining = True
            self._schedule(self._drain)

    async def _drain(self) -> None:
        try:
            while self._kept and self._token is None:
                await self._dispatch(self._kept.popleft())
        finally:
            self._draining = False
        if self._kept and self._token is None:  # arrived while the last key ran
            self._draining = True
            self._schedule(self._drain)
