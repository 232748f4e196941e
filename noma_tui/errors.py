"""Errors reach the user as notifications titled with their code, never as a traceback.

Engine errors carry a code (`PatchError.code`, §3.5); anything else is named by its
exception type. `guarded` wraps UI handlers so an unexpected failure in one action leaves
the app running and says what went wrong. A test suite sets `RAISE_UNEXPECTED` so that an
unexpected exception (one without a ``code``) in a headless app is raised instead, and a bug
fails its test with a traceback rather than a notification nobody reads and a 30 s wait.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

RAISE_UNEXPECTED = False
"""When true, `guarded` re-raises an exception without a ``code`` in a headless app (the
test suite's conftest sets it; a user's app always reports and carries on)."""


def error_code(error: BaseException | None) -> str:
    code = getattr(error, "code", None)
    return str(code) if code else type(error).__name__


def error_text(error: BaseException | None) -> str:
    message = getattr(error, "message", None)
    return str(message) if message else (str(error) or type(error).__name__)


def guarded(method: F) -> F:
    """Run a handler; on an exception, notify with its code instead of crashing."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # the safety net: report, keep the app alive
            if getattr(exc, "code", None) is None and _raises(self):
                raise
            self.log.error(f"{method.__name__} failed: {exc!r}")
            self.notify(error_text(exc), title=error_code(exc), severity="error", timeout=10)
            return None

    return wrapper  # type: ignore[return-value]


def _raises(node: Any) -> bool:
    app = getattr(node, "app", None)
    return RAISE_UNEXPECTED and bool(getattr(app, "is_headless", False))
