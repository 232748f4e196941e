"""``python -m bench [SUITE|all] [ARGS]``: the project's benchmark command (suites below)."""

from __future__ import annotations

import importlib
import sys

SUITES = {
    "docs": "bench.noma_bench",
    "patch": "bench.patch_bench",
    "skills": "bench.skills_bench",
    "tui": "bench.tui_bench",
    "app": "bench.app_bench",
    "flow": "bench.flow_bench",
    "projection": "bench.projection_bench",
    "formats": "bench.formats_bench",
    "incremental": "bench.incremental_bench",
}


def main(argv: list[str]) -> int:
    name = argv[0] if argv else "all"
    rest = argv[1:]
    if name == "all":
        code = 0
        for suite in SUITES:
            print(f"== {suite}", flush=True)
            code |= _run(suite, [])
            print(flush=True)
        return code
    if name not in SUITES:
        print(f"usage: python -m bench [{'|'.join(SUITES)}|all] [ARGS]", file=sys.stderr)
        return 2
    return _run(name, rest)


def _run(name: str, argv: list[str]) -> int:
    try:
        module = importlib.import_module(SUITES[name])
    except ModuleNotFoundError as exc:
        print(f"{name}: not available ({exc})", file=sys.stderr)
        return 1
    return int(module.main(argv) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
