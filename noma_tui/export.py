"""The Export action: write the open document as Markdown, HTML or an LLM context beside it.

The same renderer as ``noma export`` (`core.noma.export`), on the version of the document
the panes show. Writing happens in a thread worker and atomically (temp + fsync + rename);
an existing export is replaced only after the user says so, and a symbolic link in its
place is never followed (it could point anywhere).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.noma.api import SUFFIXES, atomic_write, export

from .document import LoadedDocument
from .roles import workbench_of
from .screens.picker import PickerScreen

if TYPE_CHECKING:
    from textual.screen import Screen

CHOICES: list[tuple[str, str]] = [
    ("markdown", "Markdown  (.md, CommonMark + GFM tables)"),
    ("html", "HTML page  (.html, self-contained, safe)"),
    ("llm", "LLM context  (.llm.txt, every id written out)"),
]


def export_path(doc_path: Path, fmt: str) -> Path:
    """``memo.noma`` -> ``memo.md`` / ``memo.html`` / ``memo.llm.txt`` in the same folder."""
    stem = doc_path.name.removesuffix(".noma")
    return doc_path.with_name(stem + SUFFIXES[fmt])


def write_export(loaded: LoadedDocument, fmt: str, target: Path) -> None:
    """Render and write (blocking: call from a thread worker). Raises OSError."""
    if target.is_symlink():
        raise OSError(f"{target.name} is a symbolic link; not replaced")
    text = export(loaded.doc, fmt, source_name=loaded.name)
    atomic_write(target, text.encode("utf-8", errors="replace"))


def start_export(screen: Screen[None]) -> None:
    """Ask for a format (and, if the file exists, whether to replace it), then write."""
    app = screen.app
    loaded = workbench_of(app).loaded
    if loaded is None:
        screen.notify("No document is open.", title="not available", severity="warning")
        return

    def chosen(fmt: str | None) -> None:
        if not fmt:
            return
        target = export_path(loaded.path, fmt)
        if not target.exists() and not target.is_symlink():
            _write(screen, loaded, fmt, target)
            return

        def confirmed(answer: str | None) -> None:
            if answer == "replace":
                _write(screen, loaded, fmt, target)

        app.push_screen(
            PickerScreen(
                f"{target.name} exists. Replace it?",
                [("cancel", "Keep it (cancel)"), ("replace", "Replace it")],
            ),
            confirmed,
        )

    app.push_screen(PickerScreen(f"Export {loaded.name} as", CHOICES), chosen)


def _write(screen: Screen[None], loaded: LoadedDocument, fmt: str, target: Path) -> None:
    app = screen.app

    def work() -> None:
        try:
            write_export(loaded, fmt, target)
        except OSError as exc:
            message = str(exc.strerror or exc)
            app.call_from_thread(
                app.notify, f"{target.name}: {message}", title="export failed", severity="error"
            )
            return
        app.call_from_thread(app.notify, f"Wrote {target.name}", title="Exported")

    screen.run_worker(work, thread=True, group="export", exit_on_error=False)
