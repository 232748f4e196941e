"""Rich styles for text the panes draw themselves, taken from the active theme.

Tree labels, the highlighted block source and proof diffs are Rich `Text`, which cannot
read CSS variables; the app builds a `Palette` from the theme's ``noma-*`` variables on
every theme switch and the panes redraw with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style

from themes import VARIABLE_DEFAULTS

SEVERITY_GLYPH = {"error": "✖", "warning": "▲", "info": "●"}
SEVERITY_WORD = {"error": "error", "warning": "warn", "info": "info"}


@dataclass(frozen=True, slots=True)
class Palette:
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
    def from_variables(cls, variables: dict[str, str]) -> Palette:
        def color(role: str, *, bold: bool = False, underline: bool = False) -> Style:
            value = variables.get(f"noma-{role}") or VARIABLE_DEFAULTS[f"noma-{role}"]
            return Style(color=value, bold=bold or None, underline=underline or None)

        return cls(
            error=color("error", bold=True),
            warning=color("warning", bold=True),
            info=color("info"),
            added=color("added"),
            removed=color("removed"),
            hunk=color("hunk"),
            fence=color("fence", bold=True),
            attr_key=color("attr-key"),
            attr_value=color("attr-value"),
            heading=color("heading", bold=True),
            link=color("link", underline=True),
            muted=color("muted"),
            drift=color("drift", bold=True),
        )

    def severity(self, severity: str) -> Style:
        return {"error": self.error, "warning": self.warning}.get(severity, self.info)


DEFAULT_PALETTE = Palette.from_variables({})
