"""Every notification an app posts, kept for the test to read.

A toast expires after its timeout, and a loaded machine can outlast that between two
polls of ``app._notifications``: a test that waits for a toast there can miss it. The
record wraps ``app.notify`` (which every screen's and widget's ``notify`` goes through)
and keeps each (title, message, severity) for as long as the test runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from tui_helpers import until


@dataclass(frozen=True)
class Note:
    message: str
    title: str
    severity: str


class Notes:
    """The notifications posted since the record began, oldest first."""

    def __init__(self) -> None:
        self._notes: list[Note] = []

    def add(self, note: Note) -> None:
        self._notes.append(note)

    def __len__(self) -> int:
        return len(self._notes)

    def __iter__(self) -> Iterator[Note]:
        return iter(list(self._notes))

    def since(self, mark: int) -> list[Note]:
        """The notes posted after ``mark`` (a ``len`` taken earlier)."""
        return self._notes[mark:]

    def titles(self) -> list[str]:
        return [n.title for n in self._notes]

    async def wait(self, pilot: Pilot[Any], condition: Callable[[Notes], bool], what: str) -> None:
        """Wait until ``condition`` holds of the record (the wait is bounded by ``until``)."""
        await until(pilot, lambda: condition(self), what)

    async def next_after(self, pilot: Pilot[Any], mark: int, what: str) -> Note:
        """The first note posted after ``mark``, once there is one."""
        await until(pilot, lambda: len(self._notes) > mark, what)
        return self._notes[mark]


def record_notes(app: App[Any]) -> Notes:
    """Start keeping every notification ``app`` posts (before or while it runs); the app
    still shows each one as usual."""
    notes = Notes()
    notify = app.notify

    def record(message: str, **kwargs: Any) -> None:
        notes.add(
            Note(
                message=str(message),
                title=str(kwargs.get("title", "")),
                severity=str(kwargs.get("severity", "information")),
            )
        )
        notify(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    return notes
