"""Run orchestration: resolve skills and blobs, build a sandbox job, shape the run record.

Everything that can be checked before a sandbox starts (unknown skill, instruction skill,
unknown blob, bad mount list) is a protocol error (-32602); everything after is in-band.

The run id is drawn before the sandbox starts, and the run writes its blobs through
`BlobStore.for_run`: they are owned by the run and kept once its record is returned (the
record names them); if the run raises or its process dies first, they are reclaimed (at
once, or by the next sweep), so no blob is ever left that no record names.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from core.skills_runtime.blob_store import BlobStore
from core.skills_runtime.errors import invalid_params
from core.skills_runtime.secret_store import SecretStore
from core.skills_runtime.skill_store import Skill, SkillNotFound, SkillStore
from core.skills_runtime.wire import (
    ExecuteSkillParams,
    RunCodeParams,
    RunErrorModel,
    RunResult,
)
from sandbox import Job, Outcome, Sandbox, SkillMount

MAX_MOUNTS = 32


def new_run_id() -> str:
    return f"run_{secrets.token_hex(8)}"


class RunService:
    def __init__(
        self,
        store: SkillStore,
        blobs: BlobStore,
        sandbox: Sandbox,
        secrets: Callable[[], SecretStore],
    ) -> None:
        self._store = store
        self._blobs = blobs
        self._sandbox = sandbox
        self._secrets = secrets

    def _skill(self, name: str, version: str | None) -> Skill:
        try:
            return self._store.get(name, version)
        except SkillNotFound as exc:
            raise invalid_params(str(exc), "skill_not_found", name=name, version=version) from exc

    def _check_blobs(self, blob_ids: list[str] | None) -> tuple[str, ...]:
        ids = tuple(dict.fromkeys(blob_ids or ()))
        missing = [b for b in ids if not self._blobs.exists(b)]
        if missing:
            raise invalid_params(f"unknown blob ids: {missing}", "blob_not_found", blob_ids=missing)
        return ids

    async def execute_skill(self, params: ExecuteSkillParams) -> RunResult:
        skill = self._skill(params.name, params.version)
        runtime = skill.manifest.runtime
        if skill.manifest.kind != "action" or runtime is None:
            raise invalid_params(
                f"{skill.name} is an instruction skill; read it with read_skill_file instead",
                "not_executable",
                name=skill.name,
            )
        granted = self._secrets().for_skill(skill) if skill.manifest.permissions.secrets else {}
        job = Job(
            mode="skill",
            mounts=(SkillMount(skill.name, skill.root, runtime.entrypoint),),
            target=skill.name,
            export=runtime.export,
            args=params.args or {},
            input_blobs=self._check_blobs(params.input_blobs),
            secrets=granted,
            timeout_s=params.timeout_ms / 1000 if params.timeout_ms else None,
        )
        run_id = new_run_id()
        with self._blobs.for_run(run_id) as bridge:
            outcome = await self._sandbox.run(job, bridge)
        notes = []
        if skill.manifest.permissions.network:
            notes.append(
                "this skill declares permissions.network "
                f"{skill.manifest.permissions.network}, but runs here get no network access "
                "(the sandbox has no network); calls out of the sandbox fail"
            )
        missing = sorted(set(skill.manifest.permissions.secrets) - set(granted))
        if missing:
            notes.append(
                f"declared secrets this run did not receive: {missing} (not granted "
                "to this skill under [secrets.grants] in noma-workbench.toml, or no value set)"
            )
        return _record(outcome, skill.name, run_id, notes)

    async def run_code(self, params: RunCodeParams) -> RunResult:
        """Run submitted code; it gets no secrets, as no skill's permissions cover it."""
        names = list(dict.fromkeys(params.mount_skills or ()))
        if len(names) > MAX_MOUNTS:
            raise invalid_params(f"at most {MAX_MOUNTS} skills can be mounted", "too_many_mounts")
        mounts = []
        for name in names:
            skill = self._skill(name, None)
            entry = skill.manifest.runtime.entrypoint if skill.manifest.runtime else None
            mounts.append(SkillMount(skill.name, skill.root, entry))
        if not params.entrypoint.isidentifier():
            raise invalid_params("entrypoint must be a Python function name", "bad_entrypoint")
        timeout_ms = params.limits.timeout_ms if params.limits else None
        job = Job(
            mode="code",
            mounts=tuple(mounts),
            code=params.code,
            entrypoint=params.entrypoint,
            args=params.args or {},
            input_blobs=self._check_blobs(params.input_blobs),
            timeout_s=timeout_ms / 1000 if timeout_ms else None,
        )
        run_id = new_run_id()
        with self._blobs.for_run(run_id) as bridge:
            outcome = await self._sandbox.run(job, bridge)
        return _record(outcome, "run_code", run_id)


def _record(outcome: Outcome, what: str, run_id: str, notes: list[str] | None = None) -> RunResult:
    error = None
    if outcome.error is not None:
        error = RunErrorModel(type=outcome.error.type, message=outcome.error.message)
    summary = outcome.summary or _default_summary(outcome, what)
    return RunResult(
        run_id=run_id,
        status=outcome.status,
        summary=summary,
        output=outcome.output,
        output_blobs=list(outcome.output_blobs),
        logs_preview=outcome.logs_preview,
        error=error,
        isolation=outcome.isolation,
        duration_ms=outcome.duration_ms,
        notes=notes or None,
    )


def _default_summary(outcome: Outcome, what: str) -> str:
    if outcome.status == "completed":
        return f"{what} completed in {outcome.duration_ms} ms."
    assert outcome.error is not None
    lines = [ln.strip() for ln in outcome.error.message.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else outcome.error.type
    if not last.startswith(outcome.error.type):
        last = f"{outcome.error.type}: {last}"
    return f"{what} failed: {last}"[:300]
