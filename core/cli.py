"""``noma``: a thin argparse layer over ``core``. Handlers live in ``core.commands``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noma", description="Noma documents: parse, check, render, verify, patch."
    )
    parser.add_argument("--version", action="version", version=f"noma {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    from .commands import docs

    p = sub.add_parser("parse", help="print the AST as JSON")
    p.add_argument("file")
    p.set_defaults(func=docs.cmd_parse)

    p = sub.add_parser("ids", help="canonical ids and the alias map, as JSON")
    p.add_argument("file", help="a .noma file, or a book manifest (.noma.yml)")
    p.add_argument("--chapter", action="store_true", help="parse as a book chapter (scoped ids)")
    p.set_defaults(func=docs.cmd_ids)

    p = sub.add_parser("check", help="validate; exit 1 on any error")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--ignore-rule", action="append", metavar="RULE", help="drop a rule (repeatable)"
    )
    p.add_argument("--profile", help="validate against this profile instead of the frontmatter's")
    p.set_defaults(func=docs.cmd_check)

    p = sub.add_parser("render", help="render the document as normalised noma or JSON")
    p.add_argument("file")
    p.add_argument("--to", choices=("noma", "json"), default="noma")
    p.set_defaults(func=docs.cmd_render)

    p = sub.add_parser("verify", help="run a conformance corpus (Annex C)")
    p.add_argument("dir", nargs="?")
    p.set_defaults(func=docs.cmd_verify)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
