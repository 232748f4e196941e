"""Shared test plumbing: where the conformance corpus and schemas live.

They are never copied into the repo. ``NOMA_SHARED_DIR`` (default ``../shared`` beside the
repo) or the specific ``NOMA_CONFORMANCE_DIR`` / ``NOMA_SCHEMAS_DIR`` point at them. Where
they are absent (a user's clone) the tests that need them skip with a message saying where
to get them; CI sets ``NOMA_REQUIRE_SHARED=1`` so there they fail instead of skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("NOMA_SHARED_DIR", REPO.parent / "shared"))
WHERE = (
    "get them from the upstream Noma repository: examples/conformance (the corpus) and "
    "schemas/ (the JSON Schemas), then set NOMA_CONFORMANCE_DIR / NOMA_SCHEMAS_DIR"
)


# Automatic full collections come 100x less often in a test process (every ~7M allocations
# instead of ~70k). A worker's heap is far larger than the app's or a command's (every test
# module, hypothesis's data, the apps of earlier tests: ~1M objects), so each full collection
# walked all of it, ~0.4 s, and they were 17% of the app tests' CPU. The tests' explicit
# ``gc.collect()`` run as before; only when Python collects on its own changes. (The app's
# idle collector is off in the app tests for the same reason: `tui_helpers.make_app`.)
FULL_COLLECTION_THRESHOLD = 1000


def pytest_configure(config: pytest.Config) -> None:
    """A headless app under test raises an unexpected exception instead of notifying it
    (`noma_tui.errors.RAISE_UNEXPECTED`), so a bug fails its test with its traceback; and
    Python's own full collections are rarer (`FULL_COLLECTION_THRESHOLD`)."""
    import gc

    from noma_tui import errors

    errors.RAISE_UNEXPECTED = True
    young, middle, _old = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_THRESHOLD)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long(seconds)`` go first, the longest first; the rest keep their order.
    The suite runs on every core (`./dev test`), and a long test that a worker draws near
    the end runs alone while the other workers sit idle: the 50-applies test, drawn last,
    kept the suite waiting ~15 s. Drawn first, the other workers' short tests fill in
    around it. The seconds are its rough wall time in a whole run on the 2-core machine;
    they only order the queue."""

    def seconds(item: pytest.Item) -> float:
        mark = item.get_closest_marker("long")
        return float(mark.args[0]) if mark is not None else 0.0

    items.sort(key=lambda item: -seconds(item))


def shared_dir(kind: str) -> Path:
    """The corpus (``conformance``) or schemas (``schemas``) directory, or skip."""
    env = {"conformance": "NOMA_CONFORMANCE_DIR", "schemas": "NOMA_SCHEMAS_DIR"}[kind]
    path = Path(os.environ.get(env, SHARED / kind))
    if not path.is_dir():
        message = f"{kind} not found at {path}: {WHERE}"
        if os.environ.get("NOMA_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def conformance_dir() -> Path:
    return shared_dir("conformance")


@pytest.fixture
def schemas_dir() -> Path:
    return shared_dir("schemas")


@pytest.fixture(autouse=True)
def _user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own user config, state, data and runtime dirs.

    What the product trusts lives there (trusted folders, the key that authenticates pending
    records, the demo copy), so a test never reads or writes the real user's, and no test sees
    what another one trusted. Subprocesses inherit these through the environment.
    """
    home = tmp_path_factory.mktemp("user")
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        path = home / name.split("_")[1].lower()
        path.mkdir()
        monkeypatch.setenv(name, str(path))
    runtime = home / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return home
