"""Rich styles for text the panes draw themselves, from the theme through component classes.

Tree labels, the highlighted block source, diffs and badges are Rich `Text`. Each widget
that draws them is `Themed`: it declares the ``noma--<role>`` component classes, the
stylesheet colours them from the theme's ``noma-*`` variables (themes/workbench.tcss), and
`Styles.of(widget)` reads them with `get_component_rich_style`. When the theme changes,
Textual updates the widget's styles and the widget redraws itself; nothing walks the
panes to repaint them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rich.style import Style

from themes import VARIABLE_DEFAULTS

SEVERITY_GLYPH = {"error": "✖", "warning": "▲", "info": "●"}
SEVERITY_WORD = {"error": "error", "warning": "warn", "info": "info"}

# role -> (bold, underline) as the stylesheet sets them (for the defaults before mount)
ROLES: dict[str, tuple[bool, bool]] = {
    "error": (True, False),
    "warning": (True, False),
    "info": (False, False),
    "added": (False, False),
    "removed": (False, False),
    "hunk": (False, False),
    "fence": (True, False),
    "attr-key": (False, False),
    "attr-value": (False, False),
    "heading": (True, False),
    "link": (False, True),
    "muted": (False, False),
    "drift": (True, False),
}
COMPONENTS: frozenset[str] = frozenset(f"noma--{role}" for role in ROLES)


@dataclass(frozen=True, slots=True)
class Styles:
    error: Style
    warning: Style
    info: Style
    added: Style
    removed: Style
    hunk: Style
    fence: Style
    attr_key: Style
    attr_value: Style
    heading: Style
    link: Style
    muted: Style
    drift: Style

    @classmethod
    def defaults(cls) -> Styles:
        """The dark theme's styles, for text built before a widget is mounted."""
        values = {
            role.replace("-", "_"): Style(
                color=VARIABLE_DEFAULTS[f"noma-{role}"],
                bold=bold or None,
                underline=underline or None,
            )
            for role, (bold, underline) in ROLES.items()
        }
        return cls(**values)

    @classmethod
    def of(cls, widget: Any) -> Styles:
        """The styles the stylesheet gives ``widget``'s ``noma--*`` component classes."""
        default = DEFAULT_STYLES
        values = {
            f.name: widget.get_component_rich_style(
                "noma--" + f.name.replace("_", "-"),
                partial=True,
                default=getattr(default, f.name),
            )
            for f in fields(cls)
        }
        return cls(**values)

    def severity(self, severity: str) -> Style:
        return {"error": self.error, "warning": self.warning}.get(severity, self.info)


DEFAULT_STYLES = Styles.defaults()


class Themed:
    """Mixin for a widget that draws Rich text in theme colours.

    ``self.palette`` is its current `Styles`; `restyle` is called (after the refresh that
    applied the new CSS) whenever those styles change, e.g. on a theme switch."""

    _themed_styles: Styles | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Textual reads COMPONENT_CLASSES from each widget class's own __dict__.
        own = cls.__dict__.get("COMPONENT_CLASSES", set())
        cls.COMPONENT_CLASSES = set(own) | set(COMPONENTS)  # type: ignore[attr-defined]

    @property
    def palette(self) -> Styles:
        if not getattr(self, "is_mounted", False):
            return DEFAULT_STYLES
        if self._themed_styles is None:
            self._themed_styles = Styles.of(self)
        return self._themed_styles

    def notify_style_update(self) -> None:
        super().notify_style_update()  # type: ignore[misc]
        if getattr(self, "is_mounted", False):
            self.call_after_refresh(self._check_styles)  # type: ignore[attr-defined]

    def _check_styles(self) -> None:
        fresh = Styles.of(self)
        if fresh != self._themed_styles:
            changed = self._themed_styles is not None
            self._themed_styles = fresh
            if changed:
                self.restyle()

    def restyle(self) -> None:
        """Redraw Rich text with the new styles (widgets override)."""
