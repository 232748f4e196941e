"""Execution lanes: where an automatable step's internal skill refs actually run.

`local_default` runs the step's ``skill_pack`` refs through the Skills runtime
(`core.skills_runtime.service.SkillsRuntime`, in-process) in the sandbox and reports only
what the engine may keep: the sha256 of the outputs and the cost measured from the run. The
lane never sees step text: it gets the refs, the literal inputs, and a budget. Cost is one
unit per started 100 ms of sandbox time per ref (at least one), and the budget becomes the
run's timeout, so a run cannot spend more than was reserved; hitting it is ``cost_capped``.

`cloud_premium` is an adapter with no provider here, so it is unavailable and execution on
it is refused with ``FLOW_EXECUTION_LANE_DENIED``; a provider can be plugged in.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from .enums import ExecutionFailure
from .ids import sha256_hex
from .models import SkillRef

UNIT_MS = 100
MAX_RUN_SECONDS = 300.0
MAX_EXECUTION_UNITS = int(MAX_RUN_SECONDS * 1000 / UNIT_MS)
T = TypeVar("T")

LaneStatus = Literal["completed", "failed", "cost_capped"]


@dataclass(frozen=True, slots=True)
class LaneRequest:
    """What a lane is given: refs (internal kinds only), literal inputs and a unit budget."""

    step_id: str
    skill_refs: tuple[SkillRef, ...]
    inputs: Mapping[str, str]
    budget_units: int


@dataclass(frozen=True, slots=True)
class LaneResult:
    status: LaneStatus
    cost_units: int
    output_sha256: str | None = None
    failure: ExecutionFailure | None = None


class ExecutionLane(Protocol):
    name: str

    @property
    def available(self) -> bool: ...

    def min_units(self, request: LaneRequest) -> int: ...

    def run(self, request: LaneRequest) -> LaneResult: ...


def output_digest(outputs: list[dict[str, Any]]) -> str:
    """The evidence hash: sha256 of the canonical JSON of every ref's output, in order."""
    text = json.dumps(outputs, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return sha256_hex(text)


def run_coroutine(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from sync code, even under a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(factory())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="flow-lane")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def units_for(duration_ms: int) -> int:
    return max(1, math.ceil(duration_ms / UNIT_MS))


@dataclass
class LocalSkillLane:
    """``local_default``: the step's ``skill_pack`` refs, run one after another in the sandbox.

    Secrets are never passed: a flow step runs in the run's scope and cannot widen it by
    naming a skill that asks for credentials (the operator's grants apply to the Skills
    runtime's own calls only).
    """

    workspace_root: Path
    sandbox_config: Any = None
    name: str = "local_default"

    @property
    def available(self) -> bool:
        return True

    def min_units(self, request: LaneRequest) -> int:
        return max(1, len(request.skill_refs))

    def run(self, request: LaneRequest) -> LaneResult:
        if not request.skill_refs or any(r.kind != "skill_pack" for r in request.skill_refs):
            return LaneResult("failed", 0, failure="unsupported_ref")
        return run_coroutine(lambda: self._run(request))

    async def _run(self, request: LaneRequest) -> LaneResult:
        from core.skills_runtime.errors import RpcError
        from core.skills_runtime.secret_store import SecretStore
        from core.skills_runtime.service import SkillsRuntime
        from core.skills_runtime.skill_store import SkillNotFound
        from core.skills_runtime.wire import ExecuteSkillParams
        from sandbox import SandboxConfig

        config = self.sandbox_config or replace(SandboxConfig.from_env(), slots=1)
        runtime = SkillsRuntime(
            self.workspace_root, sandbox_config=config, secrets=SecretStore.empty()
        )
        await runtime.start()
        spent = 0
        outputs: list[dict[str, Any]] = []
        try:
            for ref in request.skill_refs:
                name, _, version = ref.id.partition("@")
                try:
                    skill = runtime.store.get(name, version or None)
                except SkillNotFound:
                    return LaneResult("failed", spent, failure="skill_unavailable")
                declared = set((skill.manifest.inputs or {}).keys())
                args = {k: v for k, v in request.inputs.items() if k in declared}
                left = request.budget_units - spent
                timeout_ms = min(left * UNIT_MS, int(MAX_RUN_SECONDS * 1000))
                try:
                    result = await runtime.runs.execute_skill(
                        ExecuteSkillParams(
                            name=name, version=version or None, args=args, timeout_ms=timeout_ms
                        )
                    )
                except RpcError:
                    return LaneResult("failed", spent, failure="skill_unavailable")
                if result.status != "completed":
                    kind = result.error.type if result.error else ""
                    if kind in ("IsolationUnavailable", "RuntimeShuttingDown", "RuntimeBusy"):
                        return LaneResult("failed", spent, failure="sandbox_unavailable")
                    if kind == "TimeoutError":
                        return LaneResult(
                            "cost_capped", request.budget_units, failure="budget_exhausted"
                        )
                    return LaneResult(
                        "failed",
                        min(request.budget_units, spent + units_for(result.duration_ms)),
                        failure="skill_failed",
                    )
                spent = min(request.budget_units, spent + units_for(result.duration_ms))
                outputs.append(
                    {"ref": ref.id, "output": result.output, "output_blobs": result.output_blobs}
                )
        finally:
            await runtime.close()
        return LaneResult("completed", spent, output_sha256=output_digest(outputs))


@dataclass
class ProviderLane:
    """A lane backed by an external provider; with none configured it is unavailable."""

    name: str
    provider: Callable[[LaneRequest], LaneResult] | None = None

    @property
    def available(self) -> bool:
        return self.provider is not None

    def min_units(self, request: LaneRequest) -> int:
        return max(1, len(request.skill_refs))

    def run(self, request: LaneRequest) -> LaneResult:
        if self.provider is None:
            return LaneResult("failed", 0, failure="sandbox_unavailable")
        return self.provider(request)


def default_lanes(workspace_root: Path) -> dict[str, ExecutionLane]:
    return {
        "local_default": LocalSkillLane(workspace_root),
        "cloud_premium": ProviderLane("cloud_premium"),
    }
