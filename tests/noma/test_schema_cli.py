"""``noma schema NAME``: the five bundled schemas, shipped with the package and identical
to the official ones."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from core.noma.schemas import NAMES, UnknownSchemaError, file_name, schema_bytes


def noma(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args], capture_output=True, timeout=120
    )


def test_five_schemas_ship_as_package_data() -> None:
    assert set(NAMES) == {"patch-op", "transcript", "capability", "ast", "patch-transaction"}
    folder = resources.files("core.noma.schemas")
    for name in NAMES:
        data = folder.joinpath(file_name(name)).read_bytes()
        assert json.loads(data)["$schema"].startswith("https://json-schema.org/")


@pytest.mark.parametrize("name", NAMES)
def test_bundled_copies_are_byte_identical_to_the_official_schemas(
    name: str, schemas_dir: Path
) -> None:
    assert schema_bytes(name) == (schemas_dir / file_name(name)).read_bytes()


def test_no_official_schema_is_missing_from_the_bundle(schemas_dir: Path) -> None:
    official = {p.name.removesuffix(".schema.json") for p in schemas_dir.glob("*.schema.json")}
    assert official == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_cli_prints_the_schema_bytes(name: str) -> None:
    result = noma("schema", name)
    assert result.returncode == 0
    assert result.stdout == schema_bytes(name)


def test_cli_lists_names_and_refuses_unknown_ones() -> None:
    listing = noma("schema")
    assert listing.returncode == 0 and listing.stdout.decode().split() == list(NAMES)
    for bad in ("nope", "../../../etc/passwd", "ast.schema.json"):
        result = noma("schema", bad)
        assert result.returncode == 2 and b"unknown schema" in result.stderr
        with pytest.raises(UnknownSchemaError):
            schema_bytes(bad)


def test_the_patch_op_schema_describes_every_extended_op() -> None:
    text = schema_bytes("patch-op").decode()
    for op in ("replace_block", "move_block", "update_dataset_cell", "add_change_request"):
        assert op in text


def test_cli_does_not_need_the_shared_folder(tmp_path: Path) -> None:
    import os

    env = dict(os.environ, NOMA_SHARED_DIR=str(tmp_path / "absent"))
    env.pop("NOMA_SCHEMAS_DIR", None)
    result = subprocess.run(
        [sys.executable, "-m", "core.cli", "schema", "transcript"],
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0 and result.stdout == schema_bytes("transcript")
