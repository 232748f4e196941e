"""Structure the next person relies on: the private Textual attributes the app uses are
pinned (a Textual upgrade that moves them fails here, not in a user's terminal); the key
registry matches the help screen and the palette; the config reports what it ignores;
guarded re-raises under tests; editor screens post messages instead of calling the app."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import ClassVar

import pytest
import textual
from textual.scroll_view import ScrollView
from textual.widget import Widget
from textual.widgets import DataTable, Tree
from tui_helpers import TERMINAL, make_app, ready

from core.workspace import Workspace
from noma_tui import errors
from noma_tui.config import WorkbenchConfig
from noma_tui.keys import ALL_ACTIONS, display_key
from noma_tui.screens.help import help_table


def test_textual_private_attributes_we_rely_on_are_still_there() -> None:
    assert textual.__version__ == "8.2.8"  # pyproject pins it; bump both together
    # BlockView: scrollbar thumbs without a layout (ScrollView._scroll_update).
    assert callable(getattr(ScrollView, "_scroll_update", None))
    # DocumentTree: line numbers rebuilt on demand before moving the cursor.
    assert isinstance(inspect.getattr_static(Tree, "_tree_lines"), property)
    # OrderedInput / OrderedTextArea: a widget's own bindings by key.
    assert isinstance(Widget()._bindings.key_to_bindings, dict)
    # columns.fit: resizing DataTable columns after they were added.
    table: DataTable[str] = DataTable()
    assert hasattr(table, "_require_update_dimensions") and callable(table._clear_caches)


async def test_registry_help_and_palette_agree(demo: Path) -> None:
    table = help_table({})
    cells = [str(cell) for column in table.columns for cell in column._cells]
    for spec in ALL_ACTIONS:
        assert spec.id in cells, spec.id
        assert display_key(spec.key) in cells, spec.key
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        commands = {c.title: c.help for c in app.get_system_commands(app.main)}
        for spec in ALL_ACTIONS:
            assert spec.help in commands, spec.help
            assert display_key(spec.key) in commands[spec.help]
    ids = [spec.id for spec in ALL_ACTIONS]
    assert len(ids) == len(set(ids))  # one id, one action


def test_readme_documents_every_key() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    for spec in ALL_ACTIONS:
        assert f"`{spec.id}`" in readme, f"README lacks {spec.id}"


def test_config_reports_unknown_keymap_ids_and_bad_values(tmp_path: Path) -> None:
    (tmp_path / "noma-workbench.toml").write_text(
        '[workbench]\ntheme = "noma-light"\nwatch = "yes please"\ncolour = 1\n'
        '[workbench.keymap]\n"edit.body" = "b"\n"edit.bdy" = "x"\n',
        encoding="utf-8",
    )
    config = WorkbenchConfig.from_workspace(Workspace.open(tmp_path))
    assert config.theme == "noma-light"
    assert config.keymap == {"edit.body": "b"}
    joined = "\n".join(config.problems)
    assert "edit.bdy: no such binding id" in joined
    assert "watch" in joined and "colour: unknown setting" in joined
    assert config.watch is True  # the bad value was ignored, the default kept


def test_guarded_reraises_under_tests_but_reports_coded_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert errors.RAISE_UNEXPECTED  # set by the suite's conftest

    class Node:
        class App:
            is_headless = True

        app = App()
        notes: ClassVar[list[str]] = []

        def notify(self, text: str, **_: object) -> None:
            self.notes.append(text)

        class log:
            @staticmethod
            def error(_: str) -> None:
                return None

        @errors.guarded
        def bug(self) -> None:
            raise KeyError("a bug")

        @errors.guarded
        def refused(self) -> None:
            exc = RuntimeError("nope")
            exc.code = "not_available"  # type: ignore[attr-defined]
            raise exc

    node = Node()
    with pytest.raises(KeyError):
        node.bug()
    node.refused()
    assert node.notes == ["nope"]
    # The production default: the unexpected error is reported too, the app carries on.
    monkeypatch.setattr(errors, "RAISE_UNEXPECTED", False)
    assert node.bug() is None
    assert node.notes == ["nope", "'a bug'"]


def test_edit_screens_post_messages_instead_of_calling_the_app() -> None:
    from noma_tui.screens import edit_base, main

    for module in (edit_base, main):
        source = inspect.getsource(module)
        for call in ("workbench.propose(", "workbench.begin_session(", "workbench.end_session("):
            assert call not in source, (module.__name__, call)
    assert "screen_stack" not in inspect.getsource(__import__("noma_tui.app").app)


def test_the_edit_pipeline_talks_to_editors_by_messages_and_roles() -> None:
    """Nobody but the editor presses its submit; the status message has one writer."""
    import noma_tui.app
    import noma_tui.edit_pipeline

    for module in (noma_tui.app, noma_tui.edit_pipeline):
        source = inspect.getsource(module)
        assert ".action_submit(" not in source, module.__name__
        assert "status.message =" not in source.replace("self.main.status.message = text", "")
    app_source = inspect.getsource(noma_tui.app)
    assert app_source.count("status.message =") == 1  # watch_status_text, the one place


def _bound_classes() -> list[type]:
    """Every screen and widget class of the app that declares bindings of its own."""
    import importlib
    import pkgutil

    from textual.dom import DOMNode

    import noma_tui

    for info in pkgutil.walk_packages(noma_tui.__path__, "noma_tui."):
        if "demo_workspace" not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    seen: list[type] = []
    todo: list[type] = [DOMNode]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("noma_tui.") and "BINDINGS" in vars(cls):
            seen.append(cls)
    return seen


def test_every_binding_of_every_screen_and_pane_is_in_f1() -> None:
    from textual.binding import Binding

    from noma_tui.keys import HELP_ACTIONS

    table = help_table({})
    cells = [str(cell) for column in table.columns for cell in column._cells]
    registry = {(spec.id, spec.key, spec.action) for spec in HELP_ACTIONS}
    classes = _bound_classes()
    names = {cls.__name__ for cls in classes}
    assert {"MainScreen", "FlowFrontierPane", "ProofScreen", "ConflictScreen"} <= names
    for cls in classes:
        for binding in vars(cls)["BINDINGS"]:
            assert isinstance(binding, Binding), (cls.__name__, binding)
            assert (binding.id, binding.key, binding.action) in registry, (cls, binding)
            assert binding.id in cells and display_key(binding.key) in cells, binding.id


def test_f1_names_the_real_conflict_keys() -> None:
    table = help_table({})
    cells = [str(cell) for column in table.columns for cell in column._cells]
    assert "r / k" not in cells
    assert {"conflict.theirs", "conflict.mine", "conflict.merge", "flow.runs"} <= set(cells)
