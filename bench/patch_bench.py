"""patch_block end to end: pre-validate, apply, atomic write, post-validate, transcript.

Cold = a new ``noma patch`` process per op (interpreter start and imports included).
Warm = a long-lived engine (`DocumentCache`) that has already parsed the document.
Run: ``./dev bench patch``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import generate
from core.noma.patch.pipeline import Actor, DocumentCache, PatchRequest, patch_file


def _op(i: int, n: int) -> dict[str, object]:
    """A distinct, always-changing op per ``i``: every run writes (no noops)."""
    return {
        "op": "update_attribute",
        "id": f"claim-{(i * 7919) % n}",
        "key": "bench_seq",
        "value": i,
    }


def cold(path: Path, n: int, repeat: int) -> float:
    samples = []
    for i in range(repeat):
        import json

        cmd = [
            sys.executable,
            "-m",
            "core.cli",
            "patch",
            str(path),
            "--inplace",
            "--actor",
            "agent:bench",
            "--op",
            json.dumps(_op(i, n)),
        ]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def warm(path: Path, n: int, repeat: int) -> float:
    cache = DocumentCache()
    actor = Actor("agent", "bench")
    patch_file(path, PatchRequest(ops=[_op(100_000, n)], actor=actor), cache=cache)  # warm up
    samples = []
    for i in range(repeat):
        start = time.perf_counter()
        outcome = patch_file(path, PatchRequest(ops=[_op(1000 + i, n)], actor=actor), cache=cache)
        samples.append((time.perf_counter() - start) * 1000)
        assert outcome.ok and outcome.written, outcome.error
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench patch")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1000,5000")
    args = parser.parse_args(argv)
    print("patch_block end to end (medians, ms)")
    print(f"{'sections':>8} {'cold':>8} {'warm':>8}")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.noma"
            path.write_text(generate(n))
            c = cold(path, n, args.repeat)
            w = warm(path, n, args.repeat)
        print(f"{n:>8} {c:>8.1f} {w:>8.1f}")
    return 0
