"""The Skills Protocol methods over the stores and the sandbox: one handler per method.

Handlers take the raw ``params`` object, validate it with the wire models (a validation
failure is -32602 with the offending fields), and return JSON-ready results. Blocking file
work runs in a worker thread so one large blob never stalls the event loop.
"""

from __future__ import annotations

import base64
import functools
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from core.netauth.gate import Caller, current_caller
from core.skills_runtime.blob_store import (
    BlobNotFound,
    BlobQuotaExceeded,
    BlobStore,
    BlobTooLarge,
    blob_count_limit_from,
    blob_quota_from,
)
from core.skills_runtime.errors import (
    BLOB_QUOTA_EXCEEDED,
    INVALID_PARAMS,
    QUOTA_EXCEEDED,
    RpcError,
    invalid_params,
)
from core.skills_runtime.ledger import SkillQuotaExceeded, created_skills_quota_from
from core.skills_runtime.manifest import ManifestError, split_frontmatter
from core.skills_runtime.names import user_namespace, version_key
from core.skills_runtime.runs import RunService
from core.skills_runtime.safe_paths import UnsafePath, list_files, read_contained
from core.skills_runtime.secret_store import SecretStore
from core.skills_runtime.skill_store import (
    GUIDE_NAME,
    SHIPPED_DIR,
    NamespaceNotYours,
    Skill,
    SkillExists,
    SkillNotFound,
    SkillStore,
    Source,
)
from core.skills_runtime.wire import (
    MAX_LIST_LIMIT,
    CreateBlobParams,
    CreateSkillParams,
    DescribeSkillParams,
    EmptyParams,
    ExecuteSkillParams,
    ListSkillsParams,
    ListSkillsResult,
    ReadBlobParams,
    ReadSkillFileParams,
    RunCodeParams,
    SkillListing,
)
from core.workspace import Workspace, WorkspaceError, state_directory
from sandbox import Sandbox, SandboxConfig

Handler = Callable[[Any], Awaitable[Any]]
P = TypeVar("P", bound=BaseModel)
MAX_SKILL_FILE_BYTES = 512 * 1024
STATE_DIR = ".noma-workbench"
CREATED_DIR = "created-skills"


def parse_params(model: type[P], params: Any) -> P:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object (named params)")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        details = [
            {"field": ".".join(str(p) for p in err["loc"]) or "params", "message": err["msg"]}
            for err in exc.errors()[:20]
        ]
        raise RpcError(
            INVALID_PARAMS, "Invalid params", {"reason": "invalid", "errors": details}
        ) from None


def encode_cursor(skill: Skill, namespace: str | None) -> str:
    raw = json.dumps([skill.namespace, skill.name, skill.version, namespace]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, namespace: str | None) -> tuple[str, str, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        ns, name, version, filt = json.loads(base64.urlsafe_b64decode(padded))
        if not all(isinstance(x, str) for x in (ns, name, version)):
            raise ValueError
    except (ValueError, TypeError) as exc:
        raise invalid_params("cursor is not one this server issued", "bad_cursor") from exc
    if filt != namespace:
        raise invalid_params("cursor belongs to a listing with another namespace", "bad_cursor")
    return ns, name, version


def _after(skill: Skill, mark: tuple[str, str, str]) -> bool:
    """True if ``skill`` sorts after the cursor position (namespace, name, version DESC)."""
    ns, name, version = mark
    if (skill.namespace, skill.name) != (ns, name):
        return (skill.namespace, skill.name) > (ns, name)
    return version_key(skill.version) < version_key(version)


class SkillsRuntime:
    """Stores + sandbox + the method table; ``start()``/``close()`` bracket its life."""

    def __init__(
        self,
        workspace: Path,
        *,
        sandbox_config: SandboxConfig | None = None,
        shipped_dir: Path = SHIPPED_DIR,
        secrets: SecretStore | None = None,
        blob_quota_bytes: int | None = None,
    ) -> None:
        """``secrets=None`` reads the operator's grants from the workspace config on every
        run (so a new grant needs no restart); pass ``SecretStore.empty()`` for none."""
        self.workspace = workspace.resolve()
        # 0700 (blobs may hold private data); a symlinked or foreign state folder, blobs or
        # created-skills folder is refused (StateDirError), never written through.
        state = state_directory(self.workspace)
        state_directory(self.workspace, CREATED_DIR, create=False)
        state_directory(self.workspace, "blobs", create=False)
        ws = self._config()
        # An untrusted folder's skills (its skills/ and any created-skills it shipped) are
        # neither listed nor run: only the product's own. They could shadow a shipped skill.
        self.trusted = ws is not None and ws.trusted
        roots: list[tuple[Source, Path]] = [("shipped", shipped_dir)]
        if self.trusted:
            roots += [("workspace", self.workspace / "skills"), ("created", state / CREATED_DIR)]
        quota = blob_quota_bytes if blob_quota_bytes is not None else self._config_quota()
        # Blobs and created skills count in one ledger under one lock (issue 24), so a
        # skills server and any other process on the folder share both quotas. An
        # untrusted folder's created skills are never loaded, but their bytes still count
        # (recounted from the disk: a ledger it shipped is not believed).
        self.blobs = BlobStore(
            state / "blobs",
            quota_bytes=quota,
            skills_root=state / CREATED_DIR,
            skills_quota_bytes=created_skills_quota_from(self._skills_section(ws), os.environ),
            blob_count_limit=blob_count_limit_from(self._skills_section(ws)),
        )
        self.store = SkillStore(
            roots,
            writable_root=state / CREATED_DIR if self.trusted else None,
            admit=self.blobs.admit_skill if self.trusted else None,
        )
        self.sandbox = Sandbox(sandbox_config)
        fixed = secrets
        self.runs = RunService(
            self.store,
            self.blobs,
            self.sandbox,
            (lambda: fixed) if fixed is not None else self._workspace_secrets,
        )
        self.methods: dict[str, Handler] = {
            "list_skills": self.list_skills,
            "describe_skill": self.describe_skill,
            "read_skill_file": self.read_skill_file,
            "execute_skill": self.execute_skill,
            "run_code": self.run_code,
            "create_blob": self.create_blob,
            "read_blob": self.read_blob,
            "load_skills_protocol_guide": self.load_skills_protocol_guide,
            "create_skill": self.create_skill,
        }

    def caller_namespace(self, caller: Caller | None) -> str | None:
        """The ``user.<name>`` a caller may create skills in: its token's name, or for the
        server's owner (the local token) the workspace's actor. None without a caller."""
        if caller is None:
            return None
        if caller.name is not None:
            return user_namespace(caller.name)
        ws = self._config()
        return user_namespace(ws.actor_name) if ws is not None else None

    def _config(self) -> Workspace | None:
        try:
            return Workspace.open(self.workspace)
        except WorkspaceError:
            return None

    def _workspace_secrets(self) -> SecretStore:
        ws = self._config()
        if ws is None or not ws.trusted:
            return SecretStore.empty()  # an unreadable or untrusted config grants nothing
        return SecretStore.from_config(self.workspace, ws.section("secrets"))

    def _config_quota(self) -> int:
        return blob_quota_from(self._skills_section(self._config()), os.environ)

    @staticmethod
    def _skills_section(ws: Workspace | None) -> dict[str, Any]:
        """``[skills]``: trust-covered, so an untrusted folder's is empty (the defaults)."""
        return ws.section("skills") if ws is not None else {}

    async def start(self) -> None:
        await self.sandbox.start()

    async def close(self) -> None:
        await self.sandbox.close()
        self.blobs.close()

    # ------------------------------------------------------------------ methods

    async def list_skills(self, raw: Any) -> dict[str, Any]:
        params = parse_params(ListSkillsParams, raw)
        limit = min(params.limit, MAX_LIST_LIMIT)
        skills = await run_in_threadpool(self.store.skills)
        if params.namespace:
            skills = [s for s in skills if s.in_namespace(params.namespace)]
        if params.cursor:
            mark = decode_cursor(params.cursor, params.namespace)
            skills = [s for s in skills if _after(s, mark)]
        page, rest = skills[:limit], skills[limit:]
        listing = [self._listing(s, params.detail) for s in page]
        next_cursor = encode_cursor(page[-1], params.namespace) if rest else None
        return ListSkillsResult(skills=listing, next_cursor=next_cursor).model_dump(
            mode="json", exclude_none=True
        ) | {"next_cursor": next_cursor}

    @staticmethod
    def _listing(skill: Skill, detail: str) -> SkillListing:
        m = skill.manifest
        item = SkillListing(
            name=m.name,
            version=m.version,
            description=m.description,
            namespace=skill.namespace,
            kind=m.kind,
        )
        if detail == "summary":
            short = skill.frontmatter.get("short_description")
            item.tags = list(m.tags)
            item.short_description = short if isinstance(short, str) else None
            item.inputs = m.inputs
        return item

    def _get(self, name: str, version: str | None) -> Skill:
        try:
            return self.store.get(name, version)
        except SkillNotFound as exc:
            raise invalid_params(str(exc), "skill_not_found", name=name, version=version) from exc

    async def describe_skill(self, raw: Any) -> dict[str, Any]:
        params = parse_params(DescribeSkillParams, raw)
        skill = await run_in_threadpool(self._get, params.name, params.version)
        described: dict[str, Any] = {"manifest": skill.raw}
        if params.detail in ("summary", "full"):
            described["skill_md_frontmatter"] = skill.frontmatter
        if params.detail == "full":
            data = await run_in_threadpool(
                _read_optional, skill.root, "SKILL.md", MAX_SKILL_FILE_BYTES
            )
            described["skill_md"] = split_frontmatter(data)[1] if data is not None else None
            described["files"] = await run_in_threadpool(list_files, skill.root)
        return {"skill": described}

    async def read_skill_file(self, raw: Any) -> dict[str, Any]:
        params = parse_params(ReadSkillFileParams, raw)
        skill = await run_in_threadpool(self._get, params.name, params.version)
        try:
            data, size = await run_in_threadpool(
                read_contained, skill.root, params.path, MAX_SKILL_FILE_BYTES
            )
        except UnsafePath as exc:
            raise invalid_params(str(exc), "path_rejected", path=params.path) from exc
        result: dict[str, Any] = {"content": "", "truncated": size > len(data)}
        try:
            result["content"] = data.decode("utf-8")
        except UnicodeDecodeError:
            result["content"] = base64.b64encode(data).decode()
            result["encoding"] = "base64"
        return result

    async def execute_skill(self, raw: Any) -> dict[str, Any]:
        params = parse_params(ExecuteSkillParams, raw)
        return (await self.runs.execute_skill(params)).to_wire()

    async def run_code(self, raw: Any) -> dict[str, Any]:
        params = parse_params(RunCodeParams, raw)
        return (await self.runs.run_code(params)).to_wire()

    async def create_blob(self, raw: Any) -> dict[str, Any]:
        params = parse_params(CreateBlobParams, raw)
        try:
            info = await run_in_threadpool(self.blobs.create, params.content, params.kind)
        except BlobQuotaExceeded as exc:
            raise RpcError(
                BLOB_QUOTA_EXCEEDED,
                str(exc),
                {"reason": "blob_quota_exceeded", **exc.details()},
            ) from exc
        return {"blob_id": info.blob_id, "size_bytes": info.size_bytes}

    async def read_blob(self, raw: Any) -> dict[str, Any]:
        params = parse_params(ReadBlobParams, raw)
        try:
            view = await run_in_threadpool(
                self.blobs.read, params.blob_id, params.mode, params.max_bytes
            )
        except BlobNotFound as exc:
            raise invalid_params(str(exc), "blob_not_found", blob_id=params.blob_id) from exc
        except BlobTooLarge as exc:
            raise invalid_params(str(exc), "blob_too_large", blob_id=params.blob_id) from exc
        return {
            "content": view.content,
            "truncated": view.truncated,
            "kind": view.kind,
            "size_bytes": view.size_bytes,
        }

    async def load_skills_protocol_guide(self, raw: Any) -> dict[str, Any]:
        parse_params(EmptyParams, raw)
        # Only the product's copy: the guide every agent reads first is never a folder's.
        try:
            skill = await run_in_threadpool(
                functools.partial(self.store.get, GUIDE_NAME, None, shipped=True)
            )
        except SkillNotFound as exc:
            raise invalid_params(str(exc), "skill_not_found", name=GUIDE_NAME) from exc
        data = await run_in_threadpool(_read_optional, skill.root, "SKILL.md", 1 << 20)
        return {"content": data or ""}

    async def create_skill(self, raw: Any) -> dict[str, Any]:
        params = parse_params(CreateSkillParams, raw)
        files = [(f.path, f.content) for f in params.files]
        owner = await run_in_threadpool(self.caller_namespace, current_caller())
        try:
            skill = await run_in_threadpool(
                self.store.create, params.manifest, params.skill_md, files, owner
            )
        except NamespaceNotYours as exc:
            raise invalid_params(str(exc), "namespace_not_yours") from exc
        except ManifestError as exc:
            raise invalid_params(str(exc), "invalid_skill") from exc
        except SkillExists as exc:
            raise invalid_params(str(exc), "skill_exists") from exc
        except SkillQuotaExceeded as exc:
            raise RpcError(
                QUOTA_EXCEEDED, str(exc), {"reason": "skill_quota_exceeded", **exc.details()}
            ) from exc
        return {"name": skill.name, "version": skill.version}


def _read_optional(root: Path, relpath: str, max_bytes: int) -> str | None:
    try:
        data, _ = read_contained(root, relpath, max_bytes)
    except UnsafePath:
        return None
    return data.decode("utf-8", errors="replace")
