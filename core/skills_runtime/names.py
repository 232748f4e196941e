"""Skill names, versions and secret names: what is valid and how versions sort.

A skill name must be importable as ``skills.<name>`` inside the sandbox, so every dotted
segment is an ASCII Python identifier that is not a keyword.
"""

from __future__ import annotations

import keyword
import re

MAX_NAME_LEN = 128
_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+\-]{0,63}\Z")
_SECRET = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")


def is_skill_name(name: str) -> bool:
    if not name or len(name) > MAX_NAME_LEN:
        return False
    return all(_SEGMENT.match(s) and not keyword.iskeyword(s) for s in name.split("."))


def is_version(version: str) -> bool:
    return bool(_VERSION.match(version))


def is_secret_name(name: str) -> bool:
    return bool(_SECRET.match(name))


def version_key(version: str) -> tuple[object, ...]:
    """Sort key where ``0.10.0 > 0.9.1`` and a pre-release sorts before its release."""
    main, sep, pre = version.partition("-")
    main = main.split("+", 1)[0]

    def parts(text: str) -> tuple[tuple[int, int | str], ...]:
        return tuple((1, int(p)) if p.isdigit() else (0, p) for p in re.split(r"[.]", text))

    return (parts(main), 0 if sep else 1, parts(pre) if sep else ())


def is_segment(text: str) -> bool:
    """One dotted segment of a skill name: an ASCII identifier that is not a keyword."""
    return bool(_SEGMENT.match(text)) and not keyword.iskeyword(text)


def under(name: str, namespace: str) -> bool:
    """True if ``name`` is ``namespace`` or below it, segment by segment (case-folded, so
    ``Skills.Protocol.x`` is under ``skills.protocol``): ``userland.acme`` is not under
    ``user``, however the strings begin."""
    parts = name.casefold().split(".")
    prefix = namespace.casefold().split(".")
    return parts[: len(prefix)] == prefix


def user_namespace(identity: str) -> str | None:
    """``user.<identity>``, the namespace a caller may create skills in, or None when the
    caller's name cannot be one segment (e.g. ``ada@example.org``): then it may create none,
    rather than share a namespace with another name that maps to the same segment."""
    return f"user.{identity}" if is_segment(identity) else None
