"""Plumbing shared by the handler family: the refusal boundary, gates, visibility.

`handler` turns an internal `Refused` (and a lost optimistic-concurrency race) into the
`FlowRefusal` value a handler returns, so no surface ever sees an engine exception for a
rule. `require_gates` runs before anything else in a handler, which is what makes a handler
unreachable while its sub-gate is off: no request parsing, no store access.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec

from .context import FlowContext
from .errors import FlowRefusal, FlowResult, Refused
from .store import StoreConflict, StoredRun, Tx

P = ParamSpec("P")


def handler(
    fn: Callable[Concatenate[FlowContext, P], dict[str, Any]],
) -> Callable[Concatenate[FlowContext, P], FlowResult]:
    def wrapper(ctx: FlowContext, /, *args: P.args, **kwargs: P.kwargs) -> FlowResult:
        try:
            return fn(ctx, *args, **kwargs)
        except Refused as exc:
            return exc.refusal
        except StoreConflict:
            return FlowRefusal("FLOW_RUN_CONFLICT")

    functools.update_wrapper(wrapper, fn)
    return wrapper


def require_run_writes(ctx: FlowContext) -> None:
    if not ctx.posture.gates.run_writes_enabled:
        raise Refused("FLOW_RUN_WRITES_DISABLED")


def require_automatable(ctx: FlowContext) -> None:
    """Automatable execution needs its own gate and, under it, run writes (§1)."""
    if not ctx.posture.gates.automatable_execution_enabled:
        raise Refused("FLOW_AUTOMATABLE_EXECUTION_DISABLED")
    require_run_writes(ctx)


def visible_run(ctx: FlowContext, tx: Tx, run_id: str) -> StoredRun:
    """The run, if the caller may see it; missing and invisible answer alike (no leak)."""
    stored = tx.load_run(run_id)
    if stored is None or not ctx.actor.can_see(stored.scope, stored.actor_hash):
        raise Refused("unknown_run")
    return stored


def check_etag(stored: StoredRun, expected: str | None) -> None:
    if expected is not None and expected != stored.etag:
        raise Refused("FLOW_RUN_CONFLICT")
