"""Build the demo workspace shipped in ``noma_tui/demo_workspace/``.

The transcript a newcomer sees must be a real one, so this script does not write records
by hand: it writes the documents' first drafts, then runs patch ops through
`core.noma.patch.pipeline.patch_file` the way an agent and a human would (an agent edit
made against a stale read, a human review comment, a refused stale block edit). The final
documents, their ``.patches`` transcripts, the capability sidecar and the workspace config
are then copied into the package.

The build runs in a fixed temporary folder so the ``doc_uri`` in the records names a
neutral path rather than the machine the demo was built on.

Run it after changing the drafts below: ``python -m noma_tui.demo_build``; then check
with ``noma transcript verify noma_tui/demo_workspace/research-memo.noma.patches``. A
rebuild gives the records new times and op ids, so regenerate the app snapshots
(``pytest tests/tui --snapshot-update``) and the screenshots (``python -m
noma_tui.screenshots``) after it. The ``flows/`` folder (the Flow issue's demo bundles) is
left as it is.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from core.noma.api import (
    Actor,
    DocumentCache,
    PatchRequest,
    SourceLines,
    audit,
    patch_file,
    read_document,
    transcript_path,
)

DEMO_DIR = Path(__file__).with_name("demo_workspace")
BUILD_DIR = Path(tempfile.gettempdir()) / "noma-workbench-demo"

AGENT = Actor("agent", "research-assistant", model="demo-model", version="0.3")
HUMAN = Actor("human", "ana")

CONFIG = """\
# Noma Workbench demo workspace. Edits made in the app are recorded under this name.
[workbench]
actor = "ana"
open = "research-memo.noma"
theme = "noma-dark"

# Remap any key by its binding id (see the help screen, F1), for example:
# [workbench.keymap]
# "edit.body" = "e,f2"
"""

SIDECAR = """\
# What agents may do to research-memo.noma (Annex A). Advisory in v1.0: the engine
# explains missing grants in its notes but never refuses an op because of them.
nomaAgent:
  version: 1
  profile: research
  blocks:
    claim:
      ops: [replace_body, update_attribute]
      attrs:
        confidence:
          type: number
          min: 0
          max: 1
    evidence:
      ops: [add_block, replace_body, replace_block]
    comment:
      ops: [add_comment, resolve_comment]
  ids:
    rename: false
  validation:
    required: true
"""

MEMO_DRAFT = """\
---
title: Checkout latency under cache warming
profile: research
aliases: [latency-memo]
agent_capabilities: ./research-memo.noma.capabilities.yml
---

# Checkout latency under cache warming

This memo collects what we know about warming the pricing cache before peak checkout
traffic. Every claim points at the evidence behind it; open questions are comments.

## Summary {aliases="tl-dr"}

Warming the cache cuts p95 checkout latency by about a third for large tenants; for small
tenants the effect is within noise. The main claim is [[warm-cache-p95]].

## Claims

::claim{id="warm-cache-p95" confidence=0.7}
Pre-warming the pricing cache cuts p95 checkout latency by 30-35% for tenants above
10k orders per day.
::

::claim{id="small-tenant-noise" confidence=0.55}
For tenants below 1k orders per day the difference is within run-to-run noise.
::

::counterevidence{id="cev-cold-start" for="warm-cache-p95"}
Cold-start runs right after a deploy show no improvement for the first four minutes.
::

## Risks

::risk{id="risk-stale-prices" severity="high"}
A warmed cache can serve prices that changed during the warm-up window.
::

## Method

::note{id="note-method"}
All numbers come from the staging fleet; production sampling starts next sprint.
::
"""

ADR_DRAFT = """\
---
title: "ADR-014: Move the pricing cache to a shared Redis tier"
profile: adr
---

# ADR-014: Move the pricing cache to a shared Redis tier

## Context

Every deploy empties the per-node pricing caches, and the first minutes after a deploy
carry the slowest checkouts of the day. Warming each node on boot multiplies the warm-up
load by the size of the fleet.

## Decision

::decision{id="adr-014" status="proposed" date="2025-04-02"}
Run the pricing cache as a shared Redis tier, warmed once by a job that every deploy
triggers.
::

## Options considered

| Option | Warm-up cost | New moving parts |
|:-------|:-------------|:-----------------|
| Per-node caches, warmed on boot | fleet size x catalogue | none |
| Shared Redis tier | one catalogue | Redis cluster, warm-up job |

## Consequences

::risk{id="risk-redis-sla" owner="platform-team" severity="medium"}
Checkout now depends on the Redis tier being available; it needs a fallback to direct
pricing reads.
::

::decision{id="adr-014-fallback"}
Fall back to direct database reads when Redis is unavailable for more than 2 seconds.
::
"""

SPEC_DRAFT = """\
---
title: Usage-based pricing, tier spec
profile: technical
---

# Usage-based pricing, tier spec

Prices per order above each tier's included volume, and the usage the tiers were sized on.

## Tiers

::table{id="price-tiers" header align="l,r,r"}
Tier | Included orders | Price per extra order
Starter | 1,000 | 0.040
Growth | 10,000 | 0.030
Scale | 100,000 | 0.020
::

## Usage data

::dataset{id="usage-2025q1"}
schema:
  month: string
  orders: number
rows:
  - [2025-01, 8120]
  - [2025-02, 9034]
  - [2025-03, 11877]
::

::plot{id="usage-plot" dataset="usage-2025q1" column="orders" kind="bar"}
Orders per month, first quarter.
::

## Follow-up

::agent_task{id="task-refresh-usage" scope="usage-2025q1"}
Append April's order count once the month closes.
::
"""

EVIDENCE = """\
::evidence{id="ev-loadtest-march" for="warm-cache-p95" source="loadtest-2025-03"}
Load test on the staging fleet, 12 runs per arm: p95 fell from 412 ms to 271 ms.
::"""


def _block_hash(path: Path, ident: str) -> str:
    """The block hash an editor would hold for ``ident`` right now."""
    source, doc = read_document(path)
    from core.noma.api import index

    node = index(doc).first[ident]
    return SourceLines(source.text).block_hash(node.line, node.end_line)


def _sha(path: Path) -> str:
    return read_document(path)[0].sha256


def _patch(
    path: Path,
    actor: Actor,
    op: dict[str, Any],
    reason: str,
    cache: DocumentCache,
    *,
    base_sha256: str | None = None,
) -> str:
    request = PatchRequest(ops=[op], actor=actor, reason=reason, base_sha256=base_sha256)
    outcome = patch_file(path, request, cache=cache)
    return outcome.code or "applied"


def _memo_history(path: Path, cache: DocumentCache) -> list[str]:
    results = []
    stale_read = _sha(path)  # the agent reads the memo, then works for a while
    results.append(
        _patch(
            path,
            AGENT,
            {"op": "update_attribute", "id": "warm-cache-p95", "key": "confidence", "value": 0.8},
            "Raise confidence after the March load test.",
            cache,
            base_sha256=_sha(path),
        )
    )
    results.append(
        _patch(
            path,
            AGENT,
            {"op": "add_block", "parent": "claims", "position": 2, "content": EVIDENCE},
            "Attach the March load test as evidence.",
            cache,
            base_sha256=_sha(path),
        )
    )
    results.append(
        _patch(
            path,
            HUMAN,
            {
                "op": "add_comment",
                "id": "cm-sample-size",
                "target": "ev-loadtest-march",
                "content": "Is 12 runs per arm enough? Please add the spread.",
                "author": "ana",
            },
            "Review question on the sample size.",
            cache,
            base_sha256=_sha(path),
        )
    )
    evidence_hash = _block_hash(path, "ev-loadtest-march")
    results.append(
        _patch(
            path,
            AGENT,
            {
                "op": "replace_body",
                "id": "ev-loadtest-march",
                "content": "Load test on the staging fleet, 12 runs per arm: p95 fell from "
                "412 ms to 271 ms\n(run-to-run spread 18 ms).",
                "baseHash": evidence_hash,
            },
            "Add the run-to-run spread asked for in review.",
            cache,
            base_sha256=stale_read,  # prepared against an old read: recorded as drift
        )
    )
    results.append(
        _patch(
            path,
            HUMAN,
            {"op": "resolve_comment", "id": "cm-sample-size", "resolved_by": "ana"},
            "The spread answers the question.",
            cache,
            base_sha256=_sha(path),
        )
    )
    results.append(
        _patch(
            path,
            AGENT,
            {
                "op": "replace_body",
                "id": "warm-cache-p95",
                "content": "Pre-warming cuts p95 checkout latency by a third.",
                "baseHash": "0123456789abcdef",  # a hash of a version that no longer exists
            },
            "Shorten the claim.",
            cache,
            base_sha256=_sha(path),
        )
    )
    return results


def _adr_history(path: Path, cache: DocumentCache) -> list[str]:
    return [
        _patch(
            path,
            HUMAN,
            {
                "op": "add_comment",
                "id": "cm-oncall",
                "target": "risk-redis-sla",
                "content": "Who is on call for the Redis tier during the rollout?",
                "author": "li",
            },
            "Open question from the design review.",
            cache,
            base_sha256=_sha(path),
        ),
        _patch(
            path,
            HUMAN,
            {"op": "update_attribute", "id": "adr-014", "key": "status", "value": "accepted"},
            "Accepted in the architecture review on 2025-04-09.",
            cache,
            base_sha256=_sha(path),
        ),
    ]


def build(out_dir: Path = DEMO_DIR, work_dir: Path = BUILD_DIR) -> dict[str, list[str]]:
    """Write the drafts, run the histories, copy the results into ``out_dir``."""
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    drafts = {
        "research-memo.noma": MEMO_DRAFT,
        "decision-record.noma": ADR_DRAFT,
        "pricing-spec.noma": SPEC_DRAFT,
    }
    for name, text in drafts.items():
        (work_dir / name).write_text(text, encoding="utf-8")
    (work_dir / "research-memo.noma.capabilities.yml").write_text(SIDECAR, encoding="utf-8")
    (work_dir / "noma-workbench.toml").write_text(CONFIG, encoding="utf-8")

    cache = DocumentCache()
    results = {
        "research-memo.noma": _memo_history(work_dir / "research-memo.noma", cache),
        "decision-record.noma": _adr_history(work_dir / "decision-record.noma", cache),
    }
    for name in results:
        report = audit(transcript_path(work_dir / name))
        if not report.ok:
            raise SystemExit(f"{name}: transcript does not verify: {report.problems}")

    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.iterdir():
        if old.is_file() and old.name != "__init__.py":
            old.unlink()
    for path in sorted(work_dir.iterdir()):
        if path.is_file() and not path.name.startswith("."):
            shutil.copy2(path, out_dir / path.name)
    shutil.rmtree(work_dir, ignore_errors=True)
    return results


def main() -> int:
    results = build()
    for name, codes in results.items():
        print(f"{name}: {', '.join(codes)}")
    print(f"demo workspace written to {DEMO_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
