"""Exports and ``render --to noma`` at N sections: in process and as whole CLI runs,
optionally side by side with a reference implementation measured in the same run.

In process: median CPU milliseconds (``time.process_time``) of ``export(doc, "markdown")``,
``export(doc, "html")`` and ``render_noma(doc)`` on the parsed synthetic memo (the parse is
not timed). CPU time, not wall time, so other work on a shared machine moves it less.

Whole CLI: ``noma export FILE --to markdown|html --out F`` and ``noma render FILE --to noma
--out F`` as fresh processes (start-up, read, parse, render, write), median wall and CPU
seconds of the children (``resource.getrusage``).

``--reference DIR`` names a checkout of the reference tool (node; its built ``dist`` and
``bin/noma.mjs``): its renderers are timed the same way in each round, in turn with ours,
and the ratio ours/reference is taken round by round (pairing keeps it meaningful when the
machine's speed drifts). Run: ``./dev bench export [--sizes 5000] [--reference DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.generate import generate
from core.noma import parse
from core.noma.export import export
from core.noma.render import render_noma

FORMATS = ("markdown", "html", "noma")

# Times the reference's renderers in its own process: argv = dist/index.js, file, repeat.
REFERENCE_SCRIPT = """
import { readFileSync } from "node:fs";
const [lib, file, repeat] = process.argv.slice(1);
const { parse, renderMarkdown, renderHtml, renderNoma } = await import(lib);
const doc = parse(readFileSync(file, "utf8"));
const run = { markdown: () => renderMarkdown(doc), html: () => renderHtml(doc),
  noma: () => renderNoma(doc) };
const out = {};
for (const [name, fn] of Object.entries(run)) {
  fn();  // warm-up: the JIT's first pass is not a steady-state figure
  const ms = [];
  for (let i = 0; i < Number(repeat); i++) {
    const start = process.cpuUsage(); fn(); const used = process.cpuUsage(start);
    ms.push((used.user + used.system) / 1000);
  }
  ms.sort((a, b) => a - b);
  out[name] = ms[Math.floor(ms.length / 2)];
}
console.log(JSON.stringify(out));
"""


def cpu_median_ms(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up (imports, memos), as the reference's run is warmed up
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def ours_in_process(path: Path, repeat: int) -> dict[str, float]:
    doc = parse(path.read_bytes())
    return {
        "markdown": cpu_median_ms(lambda: export(doc, "markdown"), repeat),
        "html": cpu_median_ms(lambda: export(doc, "html"), repeat),
        "noma": cpu_median_ms(lambda: render_noma(doc), repeat),
    }


def reference_in_process(reference: Path, path: Path, repeat: int) -> dict[str, float]:
    lib = (reference / "dist" / "index.js").as_uri()
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", REFERENCE_SCRIPT, lib, str(path), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def timed_process(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the finished child) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def cli_commands(path: Path, out: Path, reference: Path | None) -> dict[str, list[list[str]]]:
    noma = shutil.which("noma", path=os.path.dirname(sys.executable)) or "noma"
    ours = {
        "markdown": [noma, "export", str(path), "--to", "markdown", "--out", str(out / "o.md")],
        "html": [noma, "export", str(path), "--to", "html", "--out", str(out / "o.html")],
        "noma": [noma, "render", str(path), "--to", "noma", "--out", str(out / "o.noma")],
    }
    runs = {name: [argv] for name, argv in ours.items()}
    if reference is not None:
        cli = str(reference / "bin" / "noma.mjs")
        for name in FORMATS:
            runs[name].append(
                ["node", cli, "render", str(path), "--to", name, "--out", str(out / f"r.{name}")]
            )
    return runs


def ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def run(n: int, repeat: int, rounds: int, reference: Path | None, cli_runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="noma-export-bench-") as tmp:
        folder = Path(tmp)
        path = folder / f"memo-{n}.noma"
        path.write_text(generate(n), encoding="utf-8")
        ours: dict[str, list[float]] = {f: [] for f in FORMATS}
        ref: dict[str, list[float]] = {f: [] for f in FORMATS}
        for _ in range(rounds):
            for name, ms in ours_in_process(path, repeat).items():
                ours[name].append(ms)
            if reference is not None:
                for name, ms in reference_in_process(reference, path, repeat).items():
                    ref[name].append(ms)
        print(f"in process, {n} sections (median CPU ms over {rounds} rounds of {repeat})")
        print(f"{'':>10} {'ours':>9}" + (f" {'reference':>9} {'ratio':>7}" if reference else ""))
        for name in FORMATS:
            line = f"{name:>10} {statistics.median(ours[name]):>9.1f}"
            if reference is not None:
                ref_ms = statistics.median(ref[name])
                line += f" {ref_ms:>9.1f} {ratio(ours[name], ref[name]):>7.2f}"
            print(line)
        if cli_runs <= 0:
            return
        print(f"\nwhole CLI, {n} sections (median of {cli_runs} runs, in turn with the reference)")
        print(
            f"{'':>10} {'wall s':>7} {'cpu s':>7}"
            + (f" {'ref wall':>8} {'ref cpu':>7} {'wall x':>6} {'cpu x':>6}" if reference else "")
        )
        for name, argvs in cli_commands(path, folder, reference).items():
            timed_process(argvs[0])  # warm-up: the first run pays for cold caches
            samples: list[list[tuple[float, float]]] = [[] for _ in argvs]
            for _ in range(cli_runs):
                for k, argv in enumerate(argvs):
                    samples[k].append(timed_process(argv))
            walls = [[s[0] for s in one] for one in samples]
            cpus = [[s[1] for s in one] for one in samples]
            wall, cpu = statistics.median(walls[0]), statistics.median(cpus[0])
            line = f"{name:>10} {wall:>7.3f} {cpu:>7.3f}"
            if reference is not None:
                line += (
                    f" {statistics.median(walls[1]):>8.3f} {statistics.median(cpus[1]):>7.3f}"
                    f" {ratio(walls[0], walls[1]):>6.2f} {ratio(cpus[0], cpus[1]):>6.2f}"
                )
            print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench export")
    parser.add_argument("--sizes", default="5000")
    parser.add_argument("--repeat", type=int, default=7, help="timed calls per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, in turn with the reference")
    parser.add_argument("--cli-runs", type=int, default=5, help="whole-CLI runs (0: none)")
    parser.add_argument("--reference", type=Path, help="checkout of the reference (node) tool")
    args = parser.parse_args(argv)
    if args.reference is not None and not (args.reference / "dist" / "index.js").exists():
        print(f"bench export: no built reference at {args.reference}", file=sys.stderr)
        return 2
    from core.noma.export.compiled import load
    from core.noma.render import ACCELERATOR

    print(f"render: {ACCELERATOR}; exports: {load('markdown')[1]}")
    for n in (int(s) for s in args.sizes.split(",")):
        run(n, args.repeat, args.rounds, args.reference, args.cli_runs)
    return 0
