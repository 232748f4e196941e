"""The wire's id, attribute-key and hash shapes, written once.

The schema forms (``^...$``) go to the typed op models (pydantic); the compiled forms
(matched whole, ``\\Z``: a trailing newline is not part of a valid value) are for the checks
the pipeline and the engine run on request fields and new ids.
"""

from __future__ import annotations

import re

_ID = r"[A-Za-z_][A-Za-z0-9_./:-]*"
_KEY = r"[A-Za-z_][A-Za-z0-9_-]*"
_HASH = r"[0-9a-fA-F]{8,64}"

ID_PATTERN = f"^{_ID}$"
KEY_PATTERN = f"^{_KEY}$"
HASH_PATTERN = f"^{_HASH}$"

ID_RE = re.compile(_ID + r"\Z")
HASH_RE = re.compile(_HASH + r"\Z")
