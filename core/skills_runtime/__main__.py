"""``python -m core.skills_runtime skills ...``: the CLI before it is wired into ``noma``."""

from __future__ import annotations

import argparse
import sys

from core.skills_runtime.cli import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.skills_runtime")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
