"""Frontmatter YAML loading.

Timestamps stay strings (a ``date: 2026-01-05`` must serialise to JSON and compare as the
text the author wrote), and a YAML error becomes a recovery note, never an exception.
"""

from __future__ import annotations

from typing import Any

import yaml

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc]
    """SafeLoader without the implicit timestamp resolver."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _Base.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """Parse YAML with the document-safe loader; raises ``yaml.YAMLError`` on bad input."""
    return yaml.load(text, Loader=_Loader)


def load_frontmatter(raw: str) -> tuple[dict[str, Any], tuple[str, str, str] | None]:
    """Return the frontmatter mapping and, if it could not be read, a (severity, code, msg)."""
    try:
        data = load_yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        return {}, ("error", "frontmatter-invalid-yaml", f"Frontmatter is not valid YAML{where}.")
    except (ValueError, RecursionError):
        return {}, ("error", "frontmatter-invalid-yaml", "Frontmatter is not valid YAML.")
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, (
            "warning",
            "frontmatter-not-mapping",
            "Frontmatter must be a YAML mapping (key: value lines); it was ignored.",
        )
    return {str(k): v for k, v in data.items()}, None
