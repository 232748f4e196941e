"""The five official JSON Schemas of the protocol, shipped with the package.

``noma schema NAME`` prints them byte for byte (spec §1.5: "discover the full op wire shape
with ``noma schema patch-op``"). They are copies of the upstream ``schemas/`` folder kept
identical by a test (``tests/noma/test_schema_cli.py``), and read through
``importlib.resources`` so they work from a wheel, a zip or an editable install alike.
"""

from __future__ import annotations

from importlib import resources

NAMES: tuple[str, ...] = ("patch-op", "transcript", "capability", "ast", "patch-transaction")
"""Every bundled schema, by the name ``noma schema`` takes."""


class UnknownSchemaError(KeyError):
    """A schema name that is not bundled."""


def file_name(name: str) -> str:
    """``patch-op`` -> ``patch-op.schema.json``; raises `UnknownSchemaError` otherwise."""
    if name not in NAMES:
        raise UnknownSchemaError(name)
    return f"{name}.schema.json"


def schema_bytes(name: str) -> bytes:
    """The schema's exact bytes as shipped."""
    return resources.files(__name__).joinpath(file_name(name)).read_bytes()
