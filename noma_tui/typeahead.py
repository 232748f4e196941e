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

Work a key starts in a thread (the flow pane's calls: listing the flows before the picker,
a run write whose result the next key acts on) holds the keys with an `Until` from the key
until the pane is idle again; a dialog its answer opens takes the hold over.

A key bound with priority runs when it is dispatched, so it would overtake keys sent just
before it to a widget and still waiting in that widget's queue: ``j e`` would open the
editor on the block the tree showed before the ``j``. Such a key is deferred
(`KeyGate.defer`) until those keys have been handled all the way up (`after_bubbled`).

A dialog answered by a key (a picker's Enter) opens what comes next only in its result
callback, which Textual runs on a later turn of the pump that asked for the dialog; keys
that follow the answer in the same burst would land on the dialog being closed. `answer`
holds them from the answer until that callback has run: a dialog the callback pushes
takes the hold over, and a callback that opens nothing lets them go where they go.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from textual import events
from textual.dom import DOMNode
from textual.message_pump import MessagePump
from textual.screen import Screen

from .keyorder import after_typed

Result = TypeVar("Result")

Typed = events.Key | events.Paste
Dispatch = Callable[[Typed], Awaitable[None]]
Schedule = Callable[..., object]


class KeyGate:
    """Holds terminal keys while ``token`` (what the user is waiting for) is not ready."""

    def __init__(
        self, dispatch: Dispatch, schedule: Schedule, alive: Callable[[object], bool]
    ) -> None:
        self._dispatch = dispatch  # the app's own key handling (bindings, focus)
        self._schedule = schedule  # runs a coroutine on the app's queue, after what is there
        self._alive = alive  # False: what was waited for is gone (a screen closed early)
        self._kept: deque[Typed] = deque()
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
        if self._token is not None and not self._still_alive(self._token):
            self.release(self._token)
        return self._token is not None or self._draining or bool(self._kept)

    def _still_alive(self, token: object) -> bool:
        if isinstance(token, (Handoff, Until)):
            return token.alive()
        return self._alive(token)

    def keep(self, event: Typed) -> None:
        self._kept.append(event)

    def defer(self, event: Typed, token: object) -> None:
        """``event`` was about to be handled but must wait for ``token``: it goes first
        in line (a drain that was handing it on stops there) and the keys wait."""
        self._kept.appendleft(event)
        self.hold(token)

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


class Handoff:
    """A hold for a dialog's answer: alive while the pump that will run the answer's
    callback still runs (one that closed first can never release it)."""

    __slots__ = ("requester",)

    def __init__(self, requester: MessagePump) -> None:
        self.requester = requester

    def alive(self) -> bool:
        return self.requester.is_running


class Until:
    """A hold for work a key started (a call in a thread whose answer opens a dialog or
    changes what the next key acts on): alive while ``alive()`` says its owner can still
    release it (a pane that left the screen never will)."""

    __slots__ = ("alive",)

    def __init__(self, alive: Callable[[], bool]) -> None:
        self.alive = alive


def gate_of(node: DOMNode) -> KeyGate | None:
    """The app's key gate, for a widget or screen that holds keys (None in an app without
    one, such as a pane tested on its own)."""
    gate = getattr(node.app, "gate", None)
    return gate if isinstance(gate, KeyGate) else None


def priority_bound(screen: Screen[Any], key: str) -> bool:
    """Would ``key`` run a priority binding (checked from the app down) on ``screen``?"""
    for _namespace, bindings in screen._binding_chain:
        if any(binding.priority for binding in bindings.key_to_bindings.get(key, ())):
            return True
    return False


def after_bubbled(target: DOMNode, callback: Callable[[], object]) -> None:
    """Run ``callback`` once every key already sent to ``target`` has been handled, its
    own handler and then each ancestor's (a key bubbles up a queue at a time, and the app
    runs the widget's non-priority bindings last): a call queued in each queue in turn
    follows the same path right behind them."""
    chain: list[MessagePump] = [target, *target.ancestors]

    def step(index: int) -> None:
        while index < len(chain):
            if chain[index].call_later(step, index + 1):
                return
            index += 1  # that one has closed: nothing of ours is left in it
        callback()

    step(0)


def decide_after_typed(screen: Screen[Any], decide: Callable[[], object]) -> None:
    """Run ``decide`` once the keys typed so far are in their field (`after_typed`); the
    keys typed from now wait until it has run, and a dialog it opens (a question) takes
    them over. For a key whose outcome is not known when it is pressed (Esc: close, or
    ask first?)."""
    gate = gate_of(screen)
    token = Until(lambda: screen.is_attached)
    if gate is not None:
        gate.hold(token)

    def run() -> None:
        try:
            decide()
        finally:
            if gate is not None:
                gate.release(token)  # a no-op once a dialog holds them

    after_typed(screen, run)


def hold_for_answer(screen: Screen[Any], gate: KeyGate) -> Handoff | None:
    """Keys typed from now on wait: ``screen`` is about to be answered (`answer`). None
    when nothing will run the answer's callback (the keys are not held then)."""
    # Textual queues a result callback on the requester with `call_next`.
    callbacks = screen._result_callbacks
    requester = callbacks[-1].requester if callbacks else None
    if requester is None or not requester.is_running:
        return None
    token = Handoff(requester)
    gate.hold(token)
    return token


def answer_after_typed(screen: Screen[Result], value: Callable[[], Result]) -> None:
    """A dialog answered by a key (Enter): from now on the keys wait for what the answer
    opens, and ``value()`` (the highlight, the field) is read once the keys typed before
    the answer have been applied; then ``screen`` is dismissed with it."""
    gate = gate_of(screen)
    token = hold_for_answer(screen, gate) if gate is not None else None

    def dismiss() -> None:
        if gate is not None:
            answer(screen, value(), gate, token)
        else:
            screen.dismiss(value())

    after_typed(screen, dismiss)


def answer(screen: Screen[Result], result: Result, gate: KeyGate, token: Handoff | None) -> None:
    """Dismiss ``screen`` with ``result``; the keys held by ``token`` wait until its result
    callback has run (and then for the dialog it opens, which holds them in turn)."""
    screen.dismiss(result)
    if token is not None:
        # Queued on the pump that runs the callback, right after it: never before it.
        token.requester.call_next(gate.release, token)
