"""The typed-client run, once per session."""

from __future__ import annotations

import pytest
from typed_run import TypedRun, run_fixtures

from tests.conftest import shared_dir


@pytest.fixture(scope="session")
def typed_run(tmp_path_factory: pytest.TempPathFactory) -> TypedRun:
    return run_fixtures(tmp_path_factory.mktemp("typed"), shared_dir("conformance"))
