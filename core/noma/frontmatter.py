"""Frontmatter YAML loading.

Timestamps stay strings (a ``date: 2026-01-05`` must serialise to JSON and compare as the
text the author wrote), and a YAML error becomes a recovery note, never an exception.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .bounded import MAX_NODES, ContentRefused, load_yaml_bounded


@cache
def _loader() -> Any:
    """SafeLoader (the C one when built) without the implicit timestamp resolver.

    Built on first use: PyYAML costs a cold ``noma check`` ~10 ms to import, and a
    document without frontmatter (or a dataset body) never needs it.
    """
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(base):  # type: ignore[misc]
        pass

    _Loader.yaml_implicit_resolvers = {
        key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in base.yaml_implicit_resolvers.items()
    }
    return _Loader


def load_yaml(text: str) -> Any:
    """Parse YAML with the document-safe loader, within `bounded`'s bounds.

    Raises ``yaml.YAMLError`` on text that is not YAML and `ContentRefused` (a
    ``ValueError``) on YAML too costly to read: callers catch both.
    """
    return load_yaml_bounded(text, _loader())


def load_frontmatter(raw: str) -> tuple[dict[str, Any], tuple[str, str, str] | None]:
    """Return the frontmatter mapping and, if it could not be read, a (severity, code, msg)."""
    import yaml

    try:
        data = load_yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        return {}, ("error", "frontmatter-invalid-yaml", f"Frontmatter is not valid YAML{where}.")
    except ContentRefused as exc:
        return {}, ("error", "frontmatter-invalid-yaml", f"Frontmatter cannot be used: {exc}.")
    except (ValueError, RecursionError):
        return {}, ("error", "frontmatter-invalid-yaml", "Frontmatter is not valid YAML.")
    if data is None:
        return {}, None
    try:
        data = _plain(data, [0], set())
    except _Unreadable as exc:
        return {}, ("error", "frontmatter-invalid-yaml", f"Frontmatter cannot be used: {exc}.")
    if not isinstance(data, dict):
        return {}, (
            "warning",
            "frontmatter-not-mapping",
            "Frontmatter must be a YAML mapping (key: value lines); it was ignored.",
        )
    return {str(k): v for k, v in data.items()}, None


# Aliases can make a small text expand enormously ("billion laughs") or refer to itself;
# both are refused rather than expanded (`load_yaml` checks first; this copy keeps its
# own count so the frontmatter stays within MAX_NODES whatever its length).


class _Unreadable(Exception):
    pass


def _plain(value: Any, budget: list[int], path: set[int]) -> Any:
    """A JSON-shaped copy of ``value``: no cycles, no non-JSON types, bounded size."""
    budget[0] += 1
    if budget[0] > MAX_NODES:
        raise _Unreadable(f"it expands to more than {MAX_NODES} values (YAML aliases)")
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)  # .nan / .inf have no JSON form: keep the text
        return value
    if isinstance(value, dict | list | set | tuple):
        key = id(value)
        if key in path:
            raise _Unreadable("a YAML anchor refers to itself")
        path.add(key)
        try:
            if isinstance(value, dict):
                return {str(k): _plain(v, budget, path) for k, v in value.items()}
            items = sorted(value, key=str) if isinstance(value, set) else value
            return [_plain(v, budget, path) for v in items]
        finally:
            path.discard(key)
    raise _Unreadable(f"it holds a {type(value).__name__} value, which has no JSON form")
