"""Synthetic ``.noma`` documents for benchmarks: N sections of research-memo content.

Every section has a heading, a paragraph with wikilinks, a claim and the evidence for it;
then one more element in rotation: a risk with an owner, a decision, a pipe table, a code
fence with ``::`` lines inside, bullet and ordered lists (with a continuation line), or a
counterevidence block with a quote. About 19 lines per section. Deterministic for a given
``n`` and ``seed`` so runs compare like with like; the document validates clean under the
research profile.
"""

from __future__ import annotations

import random

TOPICS = ("pricing", "latency", "retention", "onboarding", "compliance", "search", "billing")


def _slug(k: int) -> str:
    return f"finding-{k}-{TOPICS[k % len(TOPICS)]}-under-load"


def _extra(k: int, topic: str, rng: random.Random) -> list[str]:
    kind = k % 6
    if kind == 0:
        level = rng.choice(["low", "medium", "high"])
        return [
            f'::risk{{id="risk-{k}" owner="team-{k % 9}" severity="{level}"}}',
            "The effect may not hold for larger tenants.",
            "::",
        ]
    if kind == 1:
        status = rng.choice(["proposed", "accepted"])
        return [
            f'::decision{{id="dec-{k}" status="{status}"}}',
            f"Ship the {topic} cache behind a flag.",
            "::",
        ]
    if kind == 2:
        return [
            "| Run | p50 ms | p95 ms |",
            "|:----|-------:|-------:|",
            f"| a | {rng.randint(10, 99)} | {rng.randint(100, 300)} |",
            f"| b | {rng.randint(10, 99)} | {rng.randint(100, 300)} |",
        ]
    if kind == 3:
        return [
            "```noma",
            f'::claim{{id="example-{k}"}}',
            "Inside a fence this is text, not a directive.",
            "::",
            "```",
        ]
    if kind == 4:
        return [
            f"- measure {topic} again next sprint",
            "  with the larger tenant set",
            "- compare against the baseline",
            "",
            "1. warm the cache",
            "2. replay the traffic",
        ]
    return [
        f'::counterevidence{{id="cev-{k}" for="claim-{k}"}}',
        "Cold-start runs do not show the effect.",
        "::",
        "",
        f"> Note: figures for cohort {k} are preliminary.",
    ]


def section(k: int, rng: random.Random) -> str:
    topic = TOPICS[k % len(TOPICS)]
    earlier = f"[[{_slug(k - 2)}|the earlier finding]]" if k >= 2 else "the baseline"
    lines = [
        f"## Finding {k}: {topic.title()} under load",
        "",
        f"Observed behaviour of **{topic}** in cohort {k}. See [[claim-{max(k - 1, 0)}]] and",
        f"{earlier}.",
        "",
        f'::claim{{id="claim-{k}" confidence=0.{rng.randint(10, 99)}}}',
        f"{topic.title()} improves when the cache is warm ({rng.randint(2, 40)}% faster).",
        "::",
        "",
        f'::evidence{{id="ev-{k}" for="claim-{k}" source="bench-{k}"}}',
        f"Median over {rng.randint(5, 50)} runs.",
        "::",
        "",
        *_extra(k, topic, rng),
        "",
    ]
    return "\n".join(lines)


def generate(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    head = [
        "---",
        "title: Synthetic research memo",
        "profile: research",
        "aliases: [memo, bench]",
        "---",
        "",
        "# Synthetic research memo",
        "",
        "A generated document for benchmarks.",
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(section(k, rng) for k in range(n))
