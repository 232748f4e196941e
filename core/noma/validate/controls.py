"""``::control`` checks: ``control-missing-default``, ``control-out-of-range-default`` and
``control-invalid-lock`` (§4.4, lock values from noma-interop).

The numeric rules apply to the numeric control types only (slider, range, number,
checkbox, toggle); a control with no ``type=`` is a text control. The lock rule applies to
every control, because any control can become a DOCX content control.
"""

from __future__ import annotations

from ..attrs import AttrValue
from ..diagnostics import Diagnostic
from .registry import diag
from .rules import rule
from .scan import Scan

NUMERIC_TYPES = frozenset({"slider", "range", "number", "checkbox", "toggle"})
# A checkbox or toggle is numeric as 0/1; its natural default is written true/false.
BOOLEAN_TYPES = frozenset({"checkbox", "toggle"})

LOCK_KEYS = ("lock", "content_control_lock", "sdt_lock")
# Compared after lower-casing and removing spaces, "_" and "-" ("" is the empty value).
LOCK_VALUES = frozenset(
    {
        "control", "field", "container", "sdt", "sdtlocked", "content", "value",
        "contentlocked", "all", "both", "full", "sdtcontentlocked", "controlandcontent",
        "fieldandcontent", "unlocked", "none", "off", "false", "0", "no", "",
    }
)  # fmt: skip
_LOCK_PUNCT = str.maketrans("", "", " _-\t")


def _number(value: AttrValue | None) -> float | int | None:
    """The value as a number, or None (a boolean is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def normalise_lock(raw: str) -> str:
    """Lock modes are spelt many ways (``Content-Locked``, ``sdt_locked``): compare bare."""
    return raw.lower().translate(_LOCK_PUNCT)


@rule(
    scope="document",
    codes=("control-missing-default", "control-out-of-range-default", "control-invalid-lock"),
    attrs_of=("control",),
)
def check_controls(scan: Scan, out: list[Diagnostic]) -> None:
    """Numeric defaults for numeric controls, in range; supported lock modes for all."""
    for d in scan.checked("control"):
        attrs = d.attrs
        kind = str(attrs.get("type", "text")).strip().lower()
        if kind in NUMERIC_TYPES:
            default = attrs.get("default")
            number = _number(default)
            if number is None and not (kind in BOOLEAN_TYPES and isinstance(default, bool)):
                why = (
                    "has no default="
                    if default is None
                    else f'has a default="{d.raw_attrs.get("default", "")}" that is not numeric'
                )
                out.append(
                    diag(
                        "control-missing-default",
                        f'::control of type "{kind}" {why}; give it a numeric default for '
                        "static rendering and LLM context.",
                        d,
                    )
                )
            elif number is not None:
                low = _number(attrs.get("min"))
                high = _number(attrs.get("max"))
                if (low is not None and number < low) or (high is not None and number > high):
                    bounds = f"min={low if low is not None else '-'}, "
                    bounds += f"max={high if high is not None else '-'}"
                    out.append(
                        diag(
                            "control-out-of-range-default",
                            f"::control default={d.raw_attrs.get('default')} is outside its "
                            f"declared range ({bounds}).",
                            d,
                        )
                    )
        for key in LOCK_KEYS:
            if key not in attrs or isinstance(attrs[key], bool):
                continue
            raw = d.raw_attrs.get(key, "")
            if normalise_lock(raw) not in LOCK_VALUES:
                out.append(
                    diag(
                        "control-invalid-lock",
                        f'::control {key}="{raw}" is not a supported content-control lock '
                        "mode (use control, content, all, unlocked or none).",
                        d,
                    )
                )
