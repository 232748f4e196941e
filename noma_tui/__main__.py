"""``noma-tui [PATH]``: open a workspace folder, a single ``.noma`` file, or the demo.

With no PATH the bundled demo workspace is copied to the user's data dir on first run and
that copy is opened. ``--no-mouse`` leaves mouse capture off (terminal selection and
tmux copy keep working).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.workspace import Workspace, WorkspaceError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noma-tui",
        description="Noma Workbench: edit .noma documents block by block as patch ops.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        help="a workspace folder or a .noma file (default: a writable copy of the demo)",
    )
    parser.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    parser.add_argument("--theme", help="theme name (noma-dark, noma-light or a Textual theme)")
    parser.add_argument(
        "--no-watch", action="store_true", help="do not watch the workspace for changes"
    )
    parser.add_argument("--actor", help="name recorded for your edits (default: from config)")
    return parser


def resolve_target(path: str | None) -> tuple[Workspace, Path | None, bool]:
    """(workspace, document to open or None, single-file mode)."""
    if path is None:
        from .demo import ensure_demo_copy

        return Workspace.open(ensure_demo_copy()), None, False
    target = Path(path).expanduser()
    if target.is_dir():
        return Workspace.open(target), None, False
    if target.is_file():
        return Workspace.open(target.resolve().parent), target.resolve(), True
    raise WorkspaceError(f"{target}: no such file or folder")


def theme_names() -> list[str]:
    """The themes ``--theme`` accepts: the workbench's own and Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    from themes import THEMES

    return sorted({theme.name for theme in THEMES} | set(BUILTIN_THEMES))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.theme is not None and args.theme not in theme_names():
        # Said, not silently replaced: a typo should not look like the theme's choice.
        print(
            f"noma-tui: unknown theme {args.theme!r}; choose one of: {', '.join(theme_names())}",
            file=sys.stderr,
        )
        return 2
    try:
        workspace, document, single = resolve_target(args.path)
    except (WorkspaceError, OSError) as exc:
        print(f"noma-tui: {exc}", file=sys.stderr)
        return 2

    from .app import WorkbenchApp
    from .config import WorkbenchConfig

    config = WorkbenchConfig.from_workspace(
        workspace,
        theme=args.theme,
        watch=False if args.no_watch else None,
        actor=args.actor,
    )
    app = WorkbenchApp(workspace, document=document, config=config, single_file=single)
    app.run(mouse=not args.no_mouse)
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
