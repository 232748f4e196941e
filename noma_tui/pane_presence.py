"""Are a screen's panes all still in its DOM? Asked for every action of the footer.

The main screen asks it (through the app's ``panes_ready``) once per action each time it
re-checks which actions apply, ~30 times per new version shown. A CSS query over the
screen for the panes' ids costs ~1 ms each time in Textual (selector matching of every
widget), which made ~30 ms of every outside edit's frame. The panes the query found
the first time are kept here instead, and each check walks each one's few parents up to
the screen: a pane removed from the DOM (as at shutdown, before the screen is) is no
longer in its parent's children, and then the query runs again, so the answer is the
query's own.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from textual.dom import DOMNode
from textual.widget import Widget

__all__ = ["panes_present"]

_found: WeakKeyDictionary[DOMNode, list[Widget]] = WeakKeyDictionary()


def panes_present(screen: DOMNode, selector: str) -> bool:
    """True when ``screen`` holds one widget for each ``#id`` in ``selector`` (a comma
    separated list of ids), as ``len(screen.query(selector))`` counting them says."""
    panes = _found.get(screen)
    if panes is not None and all(_in(screen, pane) for pane in panes):
        return True
    found = list(screen.query(selector))
    if len(found) != selector.count("#"):
        _found.pop(screen, None)
        return False
    _found[screen] = found
    return True


def _in(screen: DOMNode, widget: Widget) -> bool:
    """``widget`` is a descendant of ``screen``: each node up the way is among its parent's
    children (Textual takes a widget out of that list when it removes it)."""
    node: DOMNode = widget
    while node is not screen:
        parent = node._parent
        if not isinstance(parent, DOMNode) or node not in parent._nodes:
            return False
        node = parent
    return True
