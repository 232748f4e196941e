"""Workbench themes: `textual.theme.Theme` objects plus the app stylesheet.

The app registers every theme in `THEMES` and switches between them at run time
(``ctrl+t`` or the command palette). Colours that panes draw with Rich text (diff lines,
severity badges, source highlighting) are theme *variables*, so a theme changes them too;
`VARIABLE_DEFAULTS` fills them in for Textual's built-in themes.

Nothing here may carry meaning by colour alone: severities, drift and diff lines also have
a glyph or a word, so the app stays readable with ``NO_COLOR`` set.
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

STYLESHEET = Path(__file__).with_name("workbench.tcss")

# Roles the panes use for Rich text; each theme sets them as CSS variables.
VARIABLE_DEFAULTS: dict[str, str] = {
    "noma-error": "#e05d6f",
    "noma-warning": "#e0a43a",
    "noma-info": "#5fa8d3",
    "noma-added": "#6cc070",
    "noma-removed": "#e05d6f",
    "noma-hunk": "#5fa8d3",
    "noma-fence": "#c792ea",
    "noma-attr-key": "#82aaff",
    "noma-attr-value": "#c3e88d",
    "noma-heading": "#ffcb6b",
    "noma-link": "#89ddff",
    "noma-muted": "#7f8796",
    "noma-drift": "#ff9e3d",
}

NOMA_DARK = Theme(
    name="noma-dark",
    primary="#4f9dde",
    secondary="#2f6f9f",
    accent="#e6a23c",
    warning="#e0a43a",
    error="#e05d6f",
    success="#6cc070",
    foreground="#d8dee6",
    background="#15191f",
    surface="#1c2129",
    panel="#242b35",
    dark=True,
    variables={
        **VARIABLE_DEFAULTS,
        "footer-key-foreground": "#e6a23c",
        "border": "#4f9dde",
        "border-blurred": "#39424f",
    },
)

NOMA_LIGHT = Theme(
    name="noma-light",
    primary="#1d5f9a",
    secondary="#3d7fb8",
    accent="#9a5b00",
    warning="#8a5a00",
    error="#b3261e",
    success="#1e6b2f",
    foreground="#1d232b",
    background="#f7f7f4",
    surface="#eeeeea",
    panel="#e2e3de",
    dark=False,
    variables={
        "noma-error": "#b3261e",
        "noma-warning": "#8a5a00",
        "noma-info": "#1d5f9a",
        "noma-added": "#1e6b2f",
        "noma-removed": "#b3261e",
        "noma-hunk": "#1d5f9a",
        "noma-fence": "#7b2fa8",
        "noma-attr-key": "#1d5f9a",
        "noma-attr-value": "#2e6b12",
        "noma-heading": "#8a4b00",
        "noma-link": "#006d77",
        "noma-muted": "#5c6470",
        "noma-drift": "#a84400",
        "footer-key-foreground": "#1d5f9a",
        "border": "#1d5f9a",
        "border-blurred": "#b9bcb4",
    },
)

THEMES: tuple[Theme, ...] = (NOMA_DARK, NOMA_LIGHT)
DEFAULT_THEME = NOMA_DARK.name
THEME_CYCLE: tuple[str, ...] = tuple(t.name for t in THEMES)
