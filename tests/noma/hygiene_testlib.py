"""The terminal-escape attack corpus and the check that none of it reached a terminal.

Shared by the CLI tests (tests/noma) and the app tests (tests/tui import it by path).
"""

from __future__ import annotations

import re

ESC = "\x1b"
# Each payload is something a terminal acts on instead of drawing.
PAYLOADS: dict[str, str] = {
    "osc52-clipboard": f"{ESC}]52;c;cHduZWQ=\x07",
    "osc0-title": f"{ESC}]0;pwned\x07",
    "osc2-title-st": f"{ESC}]2;pwned{ESC}\\",
    "osc8-hyperlink": f"{ESC}]8;;https://attacker.example/\x07click{ESC}]8;;\x07",
    "csi-erase-line": f"{ESC}[2K",
    "csi-cursor-up": f"{ESC}[1A{ESC}[999D",
    "dcs": f"{ESC}P$qm{ESC}\\",
    "c1-csi": "\x9b31m",
    "c1-osc": "\x9d0;pwned\x9c",
    "bidi-override": "\u202eexe.txt\u202c",
    "bidi-isolate": "\u2066hidden\u2069",
    "bel": "ding\x07",
    "backspace": "safe\x08\x08\x08\x08evil",
    "cr-overwrite": "rm -rf /\rsafe    ",
    "nul": "a\x00b",
    "del": "x\x7fy",
}
# Rich/Textual markup that must render literally.
MARKUP = "[bold red]x[/] [link=https://attacker.example]click[/link] [/] [@click=app.quit]q[/]"

# What may never reach a terminal: C0 but for newline/tab, DEL, C1, bidi controls, and any
# lone surrogate (an undecodable byte not turned into a marker).
DANGEROUS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def dangerous(text: str) -> list[str]:
    """The dangerous characters in ``text`` (empty when it is safe for a terminal)."""
    return sorted({f"U+{ord(c):04X}" for c in DANGEROUS.findall(text)})


def evil_document() -> str:
    """A document whose heading, ids, attribute values, aliases and comment carry every
    payload (ids only where the grammar lets them through: no quote, brace or space)."""
    p = PAYLOADS
    return (
        "# Memo " + p["osc52-clipboard"] + " " + MARKUP + "\n\n"
        "Intro text with " + p["bidi-override"] + " and " + p["cr-overwrite"] + ".\n\n"
        "## Section " + p["osc0-title"] + " {aliases=\"al" + p["csi-erase-line"] + "\"}\n\n"
        "::claim{id=\"c" + p["osc0-title"] + "\" confidence=0.5}\n"
        "Claim " + p["osc8-hyperlink"] + "\n"
        "::\n\n"
        "::evidence{id=\"ev" + p["c1-csi"] + "\" for=\"missing" + p["osc52-clipboard"] + "\""
        " source=\"s" + p["dcs"] + "\"}\n"
        "Evidence " + p["bel"] + p["backspace"] + p["nul"] + p["del"] + "\n"
        "::\n\n"
        "::comment{id=\"cm1\" parent=\"nope" + p["csi-cursor-up"] + "\" author=\"a"
        + p["c1-osc"] + "\"}\n"
        "Comment " + p["bidi-isolate"] + " " + p["osc2-title-st"] + "\n"
        "::\n\n"
        "::table{id=\"t1\" header}\n"
        "Name | Value\n"
        "a" + p["osc0-title"] + " | [bold]b[/] " + p["c1-csi"] + "\n"
        "::\n"
    )  # fmt: skip
