"""Side by side with the reference implementation: the same documents, the same operations.

Run: ``NOMA_REFERENCE=/path/to/reference ./dev bench vs`` (a built checkout of the
reference: its ``dist/index.js`` and ``bin/noma.mjs``, and ``node`` on PATH). Without the
variable, or when that checkout is not usable, only this implementation's column is
measured, and the first line says why.

Rows, for each size in ``--sizes`` (default 5000 sections):

- in process (a warm process, one untimed call first; medians, ms): ``parse``,
  ``parse+validate`` (the cold open: a fresh tree validated), ``export markdown``,
  ``export html``, ``render noma`` (on a parsed tree);
- whole process (medians, wall ms, and the peak resident memory of one run): ``check``
  (``noma check FILE``) and ``patch`` (``noma patch FILE --op ... --out OUT``), the two
  implementations' executables started in turn, A B A B, so a drift of the machine's speed
  hits both.

and the scaling rows for each size in ``--scale`` (default 20000,50000): ``parse``,
``check``, ``patch``. ``ratio`` is this implementation over the reference (below 1: faster;
for whole-process rows the median of the pairs' ratios). Documents are `bench.generate`'s.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.generate import generate
from bench.timing import parsed_and_validated

ENV = "NOMA_REFERENCE"
TIMER = Path(__file__).with_name("reference_timer.mjs")
IN_PROCESS = ("parse", "parse+validate", "export markdown", "export html", "render noma")
ROUNDS = 3  # in-process rows: samples taken in this many alternating blocks
PATCH_OP = {"op": "update_attribute", "id": "claim-5", "key": "status", "value": "checked"}


@dataclass(frozen=True)
class Reference:
    root: Path
    node: str

    def cli(self) -> list[str]:
        return [self.node, str(self.root / "bin" / "noma.mjs")]


def find_reference(environ: dict[str, str] | None = None) -> tuple[Reference | None, str]:
    """The reference named by ``NOMA_REFERENCE``, or None with why not."""
    env = os.environ if environ is None else environ
    value = env.get(ENV, "")
    if not value:
        return None, f"reference: not measured ({ENV} is not set)"
    root = Path(value)
    missing = [p for p in ("dist/index.js", "bin/noma.mjs") if not (root / p).is_file()]
    if missing:
        return None, f"reference: not measured ({ENV}={value} has no {', '.join(missing)})"
    node = shutil.which("node")
    if node is None:
        return None, "reference: not measured (no node on PATH)"
    return Reference(root, node), f"reference: {root}"


def ours_cli() -> list[str]:
    """This implementation's executable, as installed beside the running interpreter."""
    script = Path(sys.executable).with_name("noma")
    return [str(script)] if script.exists() else [sys.executable, "-m", "core.cli"]


def ours_in_process(op: str, text: str, repeat: int) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) of ``repeat`` calls, each after a full collection. What a call
    returns (the tree, for the parse rows) is dropped after its clock stops (`median_ms`)."""
    from core.noma import parse
    from core.noma.export import export
    from core.noma.render import render_noma

    doc = parse(text)
    calls: dict[str, Callable[[], Any]] = {
        "parse": lambda: parse(text),
        "parse+validate": lambda: parsed_and_validated(text),
        "export markdown": lambda: export(doc, "markdown"),
        "export html": lambda: export(doc, "html"),
        "render noma": lambda: render_noma(doc),
    }
    call = calls[op]
    call()  # untimed, as the reference's first call is
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = call()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        del result
    return wall, cpu


def reference_in_process(
    ref: Reference, op: str, path: Path, repeat: int
) -> tuple[list[float], list[float]]:
    done = subprocess.run(
        [ref.node, str(TIMER), str(ref.root), op, str(path), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    found = json.loads(done.stdout)
    return [float(x) for x in found["samples"]], [float(x) for x in found["cpu"]]


# Starts the measured command and reports on it. Linux counts a child's peak memory from the
# process it was forked from (the high-water mark survives fork and exec), and this bench
# process holds parsed 50k-section trees: so the command is forked from this small launcher
# instead, which times it the same way for both implementations.
LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_pid, status, usage = os.wait4(proc.pid, 0)
wall = (time.perf_counter() - start) * 1000
print(json.dumps([wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)]))
"""


def installed_env() -> dict[str, str]:
    """The environment our executable runs in as a user's install runs it: with its bytecode
    cache. pip compiles a wheel's modules when it installs them; an editable install writes
    the cache on first import, unless ``PYTHONDONTWRITEBYTECODE`` is set (as on some
    machines), and then every run compiles ~300 modules from source again (measured: a
    ``noma check`` of a one-section file 0.21-0.26 s without the cache, 0.09-0.12 s with)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_once(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """(wall ms, peak resident MiB, exit status) of one whole process, output discarded."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, mib, code = json.loads(done.stdout)
    return float(wall), float(mib), int(code)


@dataclass
class Row:
    name: str
    sections: int
    ours: float
    ref: float | None = None
    ratio: float | None = None
    ours_mib: float | None = None
    ref_mib: float | None = None
    ours_cpu: float | None = None  # in-process rows: CPU ms (node: every thread)
    ref_cpu: float | None = None
    cpu_ratio: float | None = None


def whole_process(
    name: str, n: int, ours: list[str], theirs: list[str] | None, cwd: Path, repeat: int
) -> Row:
    """A B A B ...: medians of each, and the median of the pairs' ratios. One untimed run of
    each first: ours writes its bytecode cache (`installed_env`), and both find their files
    in the page cache, as every later run does."""
    a: list[tuple[float, float]] = []
    b: list[tuple[float, float]] = []
    env = installed_env()
    run_once(ours, cwd, env)
    if theirs is not None:
        run_once(theirs, cwd)
    for _ in range(repeat):
        wall, mib, _code = run_once(ours, cwd, env)
        a.append((wall, mib))
        if theirs is not None:
            wall, mib, _code = run_once(theirs, cwd)
            b.append((wall, mib))
    row = Row(name, n, statistics.median(w for w, _ in a), ours_mib=max(m for _, m in a))
    if b:
        row.ref = statistics.median(w for w, _ in b)
        row.ratio = statistics.median(x[0] / y[0] for x, y in zip(a, b, strict=True))
        row.ref_mib = max(m for _, m in b)
    return row


def measure(
    n: int, ops: tuple[str, ...], ref: Reference | None, repeat: int, folder: Path
) -> list[Row]:
    """The rows ``ops`` at ``n`` sections, each printed as soon as it is measured."""
    path = folder / f"doc-{n}.noma"
    if not path.exists():
        path.write_text(generate(n), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    rows = []
    for op in ops:
        if op in IN_PROCESS:
            # In rounds, ours then the reference's, so a slower stretch of a shared
            # machine lands on both columns rather than on one.
            ours: tuple[list[float], list[float]] = ([], [])
            theirs: tuple[list[float], list[float]] = ([], [])
            per_round = max(1, -(-repeat // ROUNDS))
            for _ in range(ROUNDS):
                wall, cpu = ours_in_process(op, text, per_round)
                ours[0].extend(wall)
                ours[1].extend(cpu)
                if ref is not None:
                    wall, cpu = reference_in_process(ref, op, path, per_round)
                    theirs[0].extend(wall)
                    theirs[1].extend(cpu)
            ours_cpu = statistics.median(ours[1])
            row = Row(op, n, statistics.median(ours[0]), ours_cpu=ours_cpu)
            if theirs[0]:
                row.ref = statistics.median(theirs[0])
                row.ratio = row.ours / row.ref
                row.ref_cpu = statistics.median(theirs[1])
                row.cpu_ratio = ours_cpu / row.ref_cpu if row.ref_cpu else None
        elif op == "check":
            ref_check = [*ref.cli(), "check", str(path)] if ref else None
            row = whole_process(op, n, [*ours_cli(), "check", str(path)], ref_check, folder, repeat)
        elif op == "patch":
            patch = ["patch", str(path), "--op", json.dumps(PATCH_OP)]
            ours_cmd = [*ours_cli(), *patch, "--out", str(folder / "ours.noma")]
            ref_cmd = [*ref.cli(), *patch, "--out", str(folder / "ref.noma")] if ref else None
            row = whole_process(op, n, ours_cmd, ref_cmd, folder, repeat)
        else:
            raise ValueError(f"unknown row {op!r}")
        rows.append(row)
        print_row(row)
    return rows


def _cell(value: float | None, spec: str) -> str:
    return format(value, spec) if value is not None else format("-", spec.split(".")[0] + "s")


def print_header() -> None:
    print(
        f"{'row':<16} {'sections':>8} {'noma ms':>9} {'ref ms':>9} {'ratio':>6} "
        f"{'noma cpu':>9} {'ref cpu':>8} {'cpu ratio':>9} {'noma MiB':>9} {'ref MiB':>8}",
        flush=True,
    )


def print_row(r: Row) -> None:
    print(
        f"{r.name:<16} {r.sections:>8} {r.ours:>9.1f} {_cell(r.ref, '>9.1f')} "
        f"{_cell(r.ratio, '>6.2f')} {_cell(r.ours_cpu, '>9.1f')} {_cell(r.ref_cpu, '>8.1f')} "
        f"{_cell(r.cpu_ratio, '>9.2f')} {_cell(r.ours_mib, '>9.0f')} "
        f"{_cell(r.ref_mib, '>8.0f')}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench vs")
    parser.add_argument("--sizes", default="5000", help="sizes for every row")
    parser.add_argument("--scale", default="20000,50000", help="sizes for parse/check/patch")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--scale-repeat", type=int, default=3)
    parser.add_argument("--only", help="comma-separated rows (default: all)")
    args = parser.parse_args(argv)
    ref, why = find_reference()
    print(why)
    every = (*IN_PROCESS, "check", "patch")
    only = tuple(args.only.split(",")) if args.only else every
    sizes = [int(s) for s in args.sizes.split(",") if s]
    scale = [int(s) for s in args.scale.split(",") if s]
    print("side by side (medians; in-process rows warm, check/patch whole process, A B A B)")
    print_header()
    with tempfile.TemporaryDirectory(prefix="noma-vs-") as tmp:
        folder = Path(tmp)
        for n in sizes:
            measure(n, tuple(o for o in every if o in only), ref, args.repeat, folder)
        for n in scale:
            ops = tuple(o for o in ("parse", "check", "patch") if o in only)
            measure(n, ops, ref, args.scale_repeat, folder)
    return 0
