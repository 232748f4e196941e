"""``noma``: a thin argparse layer over ``core``. Handlers live in ``core.commands``."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import __version__


class _Version(argparse.Action):
    """``--version``: the version and which parser runs (compiled or pure Python, and why).

    The parser module is imported only when the flag is given: every other command's cold
    start stays as it was.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=0, default=argparse.SUPPRESS)
        super().__init__(option_strings, argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from .noma.parser import ACCELERATOR

        print(f"noma {__version__} (parser: {ACCELERATOR})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noma", description="Noma documents: parse, check, render, verify, patch."
    )
    parser.add_argument("--version", action=_Version, help="show the version and the parser in use")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # One row per group of commands, in the order `noma --help` lists them; each module
    # under `core.commands` builds its own subparsers and holds its handlers.
    from .commands import docs, flow, formats, hub, mcp, patching, skills, trust

    docs.register(sub)
    formats.add_render_parser(sub, "render")
    formats.add_render_parser(sub, "export")
    docs.register_verify(sub)
    formats.register(sub)
    patching.register(sub)
    flow.register(sub)
    trust.register(sub)
    skills.register(sub)
    hub.register(sub)
    mcp.register(sub)

    return parser


# Commands that keep running (servers): they keep Python's cyclic GC.
LONG_RUNNING = frozenset({"mcp", "skills", "serve"})
# One-shot document commands: they read files, print, and hold nothing open once their
# handler returns (every file they write is written atomically and closed by then), so
# `run` ends them without tearing down the heap (`exit_now`). Flow, trust, hub and skills
# commands hold stores (SQLite, PostgreSQL) and keep Python's normal shutdown.
FAST_EXIT = frozenset(
    {
        "parse",
        "ids",
        "check",
        "render",
        "export",
        "verify",
        "ingest",
        "fmt",
        "schema",
        "patch",
        "proof",
        "replay",
        "transcript",
        "capabilities",
        "ops",
    }
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (tests and embedders call this)."""
    return _main(argv)[0]


def _main(argv: Sequence[str] | None) -> tuple[int, bool]:
    """The exit code, and whether the process may end without tearing down its heap."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2, False
    if args.command not in LONG_RUNNING:
        # A one-shot command parses a document tree (acyclic: freed by reference counting)
        # and exits; cyclic GC passes over ~10^5 fresh nodes would only cost time (~25%).
        gc.disable()
    from .commands.inputs import InputError
    from .commands.output import error

    fast = args.command in FAST_EXIT
    try:
        return int(func(args)), fast
    except InputError as exc:  # an input file the command cannot use: say which, exit 2
        error(str(exc))
        return 2, fast
    except UnicodeDecodeError as exc:  # a backstop: an input read as text somewhere else
        error(f"an input is not UTF-8 text (byte {exc.start}): {exc.reason}")
        return 2, fast
    except KeyboardInterrupt:
        return 130, False
    except BrokenPipeError:  # the reader went away (``noma parse big.noma | head``)
        from .commands.output import reader_gone

        reader_gone()
        return 0, fast


def run() -> NoReturn:
    """The ``noma`` executable: `main`, then the process ends.

    After a document command the heap holds a tree of ~10^6 objects for a large file;
    freeing them one by one at interpreter shutdown took a third of ``noma check``'s wall
    time at 50k sections, and the operating system reclaims the memory whole anyway. So a
    document command ends with `exit_now`; any other command (and `main` itself, which
    tests call in-process) ends the ordinary way.
    """
    code, fast = _main(None)
    if fast:
        exit_now(code)
    sys.exit(code)


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` as Python's shutdown would, without freeing the heap.

    What shutdown does that anyone can observe is done first, in its order: wait for
    threads (here: any still running means the ordinary shutdown is taken instead), run
    the ``atexit`` callbacks (logging flushes its handlers there), flush stdout and stderr.
    When a flush fails (a closed pipe, a full disk) the ordinary shutdown runs instead, so
    the message and the exit status (120) are exactly Python's own.
    """
    import atexit
    import threading

    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    run()
