"""Tier 7 — security: scope denial answers `unknown_run`, with no existence leak; injection
in `instruction` stays inert (never widens scope or triggers execution); an external grant
is not a consent and a consent does not reach external_tool (SD-5/SD-6); cost caps hold;
no secret, actor id or consent token appears in any record, refusal or the database file;
classroom policy denies automatable; the import sandbox rejects policy violations."""

from __future__ import annotations

import hashlib
import hmac
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from core.flow import (
    FlowContext,
    FlowRefusal,
    advance_step,
    execute_automatable,
    get_flow,
    get_run,
    import_flow,
    list_flows,
    list_runs,
    mint_consent,
    record_evidence,
    review_import,
    start_run,
    submit_review,
    to_json,
)
from core.flow.bundle import dump_bundle, parse_bundle

from .conftest import (
    ACTOR,
    GATE_MATRIX,
    INJECTION,
    OTHER,
    FakeLane,
    automatable_bundle,
    bundle,
    consent_for,
    expected_execute_code,
    forbidden_bundle,
    make_workspace,
    malicious_bundle,
    open_ctx,
    run_by_hand,
    sqlite_only,
    started,
    starter_dir,
    step,
    store_bytes,
    with_posture,
)

pytestmark = pytest.mark.usefixtures("both_stores")

SECRET = "sk-live-5up3r-s3cr3t-v4lue-000111"


def code(result: object) -> str | None:
    return result.code if isinstance(result, FlowRefusal) else None


def every_action(ctx: FlowContext, rid: str, cid: str = "fcons_" + "1" * 32) -> list[Any]:
    step_id = "flow_lead_import#1"
    return [
        get_run(ctx, {"run_id": rid}),
        advance_step(ctx, {"run_id": rid, "step_id": step_id, "to_status": "in_progress"}),
        record_evidence(
            ctx,
            {"run_id": rid, "step_id": step_id, "evidence_ref": "op_1", "pointer_kind": "artifact"},
        ),
        mint_consent(ctx, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 5}),
        execute_automatable(ctx, {"run_id": rid, "step_id": step_id, "consent_id": cid}),
        execute_automatable(
            ctx, {"run_id": rid, "step_id": step_id, "consent_id": cid, "dry_run": True}
        ),
        submit_review(ctx, {"run_id": rid, "intent": "outcome"}),
    ]


# -------------------------------------------------------------------------- scope


def test_scope_denial_answers_unknown_run_exactly_like_a_missing_run(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    mallory = ctx.as_actor(ctx.actor_named(OTHER, ["personal", "project", "org"]))
    invisible = [to_json(r) for r in every_action(mallory, rid, cid)]
    missing = [to_json(r) for r in every_action(mallory, "run_doesnotexist", cid)]
    assert invisible == missing
    assert {r["code"] for r in invisible} == {"unknown_run"}
    assert all(r["status"] == 404 for r in invisible)
    assert list_runs(mallory, {})["runs"] == []
    assert lane.calls == []
    # and the owner still sees an untouched run
    assert get_run(ctx, {"run_id": rid})["run"]["etag"] == "r1"


def test_scope_is_authorization_for_flows_and_shared_runs(tmp_path, clock, lane):
    f = "flow_team"
    refs = [{"kind": "skill_pack", "id": "gdrive.sheets.read"}]
    team = bundle(f, [step(f, 1, automatable="automatable", skill_refs=refs)], scope="project")
    root = make_workspace(tmp_path / "ws", [team], policy={"scopes": ["personal", "project"]})
    ada = open_ctx(root, lane)
    try:
        rid = started(ada, f)["run_id"]
        cid = consent_for(ada, rid)
        solo = ada.as_actor(ada.actor_named(OTHER, ["personal"]))
        assert code(start_run(solo, {"flow_id": f, "flow_version": "1.0.0"})) == "unknown_flow"
        assert code(start_run(solo, {"flow_id": "flow_nope", "flow_version": "1.0.0"})) == (
            "unknown_flow"
        )
        assert code(get_run(solo, {"run_id": rid})) == "unknown_run"
        teammate = ada.as_actor(ada.actor_named(OTHER, ["personal", "project"]))
        assert get_run(teammate, {"run_id": rid})["run"]["scope"] == "project"
        # seeing a shared run does not make another actor's consent yours
        assert code(
            execute_automatable(teammate, {"run_id": rid, "step_id": f"{f}#1", "consent_id": cid})
        ) == ("FLOW_EXECUTION_CONSENT_REQUIRED")
        assert lane.calls == []
    finally:
        ada.close()


# ---------------------------------------------------------------------- injection


def test_injection_in_instruction_stays_inert(tmp_path, clock):
    lane = FakeLane()
    root = make_workspace(tmp_path / "ws", [malicious_bundle()])
    ctx = open_ctx(root, lane)
    try:
        run = started(ctx, "flow_malicious")
        rid = run["run_id"]
        assert run["scope"] == "personal"
        cid = consent_for(ctx, rid)
        # the manual step's text asks to be automated: the schema field decides, not the text
        assert (
            code(
                execute_automatable(
                    ctx, {"run_id": rid, "step_id": "flow_malicious#1", "consent_id": cid}
                )
            )
            == "FLOW_STEP_NOT_AUTOMATABLE"
        )
        record_evidence(
            ctx,
            {
                "run_id": rid,
                "step_id": "flow_malicious#1",
                "evidence_ref": "op_1",
                "pointer_kind": "artifact",
            },
        )
        advance_step(ctx, {"run_id": rid, "step_id": "flow_malicious#1", "to_status": "done"})
        # the automatable step's external_tool never runs through a consent (SD-5)
        assert code(
            execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_malicious#2", "consent_id": cid}
            )
        ) == ("FLOW_EXECUTION_POLICY_FORBIDDEN")
        assert lane.calls == []
        after = get_run(ctx, {"run_id": rid})["run"]
        assert after["scope"] == "personal" and after["provenance"]["harness"] == "noma-workbench"
        assert INJECTION not in json.dumps(after)
        mallory = ctx.as_actor(ctx.actor_named(OTHER, ["personal", "project", "org"]))
        assert code(get_run(mallory, {"run_id": rid})) == "unknown_run"
        db = store_bytes(root)
        assert b"fcons_stolen" not in db.replace(INJECTION.encode(), b"")
    finally:
        ctx.close()


def test_lanes_never_receive_step_text(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    execute_automatable(ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid})
    (request,) = lane.calls
    given = repr(request)
    bundle_steps = ctx.catalog.find("flow_lead_import").bundle.steps
    for text in (bundle_steps[0].instruction, bundle_steps[0].trigger, "Proof is attached"):
        assert text not in given
    assert [r.kind for r in request.skill_refs] == ["skill_pack"]


# ------------------------------------------------------------ SD-5 / SD-6 separation


def test_grant_is_not_consent_and_consent_is_not_a_grant(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    other = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    for bearer in ("fgrant_abc123", "knowtation.flow_external_grant/v0", cid.upper()):
        assert code(
            execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": bearer}
            )
        ) == ("FLOW_EXECUTION_CONSENT_REQUIRED")
    # consent is run-bound: not reusable across runs
    assert code(
        execute_automatable(
            ctx, {"run_id": other, "step_id": "flow_lead_import#1", "consent_id": cid}
        )
    ) == ("FLOW_EXECUTION_CONSENT_RUN_MISMATCH")
    assert lane.calls == []


def test_expired_consent_is_refused(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid, ttl_seconds=5)
    clock.advance(5)
    assert (
        code(
            execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
            )
        )
        == "FLOW_EXECUTION_CONSENT_REQUIRED"
    )


# ----------------------------------------------------------------------- cost caps


def test_cost_cap_is_enforced_and_policy_lowering_applies_at_once(ctx, clock):
    lane = FakeLane(cost=6)
    ctx2 = open_ctx(Path(ctx.root), lane)
    try:
        rid = started(ctx2, "flow_lead_import")["run_id"]
        cid = consent_for(ctx2, rid, cap=10)
        lowered = with_posture(ctx2, cost_cap_units=0)
        assert code(
            execute_automatable(
                lowered, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
            )
        ) == ("FLOW_EXECUTION_COST_CAPPED")
        first = execute_automatable(
            ctx2, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        )
        assert first["execution"]["cost_units"] == 6
        capped = execute_automatable(
            ctx2, {"run_id": rid, "step_id": "flow_lead_import#2", "consent_id": cid}
        )
        assert capped["execution"]["status"] == "cost_capped"
        assert capped["run"]["step_states"][1]["status"] != "done"
        assert code(
            execute_automatable(
                ctx2, {"run_id": rid, "step_id": "flow_lead_import#2", "consent_id": cid}
            )
        ) == ("FLOW_EXECUTION_COST_CAPPED")
        consumed = (
            ctx2.store.connection()
            .execute("SELECT cost_consumed_units FROM consents")
            .fetchone()[0]
        )
        assert consumed == 10
    finally:
        ctx2.close()


# ---------------------------------------------------------------- policy, imports


def test_classroom_policy_denies_automatable(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    classroom = with_posture(ctx, automatable_forbidden=True)
    assert code(
        execute_automatable(
            classroom, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        )
    ) == ("FLOW_EXECUTION_POLICY_FORBIDDEN")
    assert code(
        mint_consent(
            classroom, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 5}
        )
    ) == ("FLOW_EXECUTION_POLICY_FORBIDDEN")
    assert lane.calls == []
    # manual advancement is still allowed: policy forbids automation, not work
    assert (
        advance_step(
            classroom, {"run_id": rid, "step_id": "flow_lead_import#1", "to_status": "in_progress"}
        )["run"]["etag"]
        == "r2"
    )


def test_import_sandbox_rejects_policy_violations(ctx, clock):
    classroom = with_posture(ctx, automatable_forbidden=True)
    assert code(import_flow(classroom, dump_bundle(parse_bundle(automatable_bundle())))) == (
        "FLOW_IMPORT_AUTOMATABLE_DENIED"
    )
    assert code(import_flow(classroom, dump_bundle(parse_bundle(forbidden_bundle())))) == (
        "FLOW_IMPORT_EXTERNAL_TOOL_DENIED"
    )
    assert code(import_flow(ctx, dump_bundle(parse_bundle(forbidden_bundle())))) == (
        "FLOW_IMPORT_EXTERNAL_TOOL_DENIED"
    )
    declared = malicious_bundle()  # its external_tool is declared under `requires`
    assert import_flow(ctx, dump_bundle(parse_bundle(declared)))["proposal"]["status"] == (
        "pending"
    )


# ---------------------------------------------------------------- no secrets anywhere


def test_no_secret_actor_id_or_token_in_records_refusals_or_the_database(
    tmp_path, clock, monkeypatch
):
    monkeypatch.setenv("SALESFORCE_API_KEY", SECRET)
    lane = FakeLane()
    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root, lane)
    outputs: list[Any] = []
    try:
        rid = started(ctx, "flow_lead_import", task_ref="task_1")["run_id"]
        minted = mint_consent(
            ctx, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 20}
        )
        cid = minted["consent"]["consent_id"]
        outputs += [
            execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
            ),
            execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#2", "consent_id": cid}
            ),
            advance_step(
                ctx,
                {
                    "run_id": rid,
                    "step_id": "flow_lead_import#2",
                    "to_status": "done",
                    "approve": True,
                },
            ),
            submit_review(ctx, {"run_id": rid, "intent": "done"}),
            get_run(ctx, {"run_id": rid}),
            list_runs(ctx, {}),
        ]
        refusals = every_action(ctx.as_actor(ctx.actor_named(OTHER, ["personal"])), rid, cid)
        refusals += [
            execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#9", "consent_id": cid}
            )
        ]
        man = started(ctx)["run_id"]
        refusals += [
            advance_step(
                ctx, {"run_id": man, "step_id": "flow_weekly_review#1", "to_status": "done"}
            )
        ]
        text = json.dumps([to_json(o) for o in outputs])
        assert ACTOR not in text and SECRET not in text
        assert cid not in text  # handed out once, in the mint response, and never again
        for refusal in refusals:
            assert isinstance(refusal, FlowRefusal)
            blob = json.dumps(refusal.to_json())
            for needle in (rid, man, cid, ACTOR, SECRET, "flow_lead_import", "Do part"):
                assert needle not in blob, (refusal.code, needle)
    finally:
        ctx.close()
    data = store_bytes(root)
    assert data  # the store holds the run (a vacuous check would prove nothing)
    assert ACTOR.encode() not in data
    assert SECRET.encode() not in data
    assert cid.encode() not in data
    assert cid.removeprefix("fcons_").encode() not in data


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_gate_refusals_do_not_reveal_whether_a_run_exists(ctx, clock, writes, automatable):
    rid = started(ctx, "flow_lead_import")["run_id"]
    gated = with_posture(ctx, writes=writes, automatable=automatable)
    mallory = gated.as_actor(gated.actor_named(OTHER, ["personal"]))
    # a stranger learns nothing: the real run and a missing one answer identically
    assert [to_json(r) for r in every_action(mallory, rid)] == [
        to_json(r) for r in every_action(mallory, "run_zzzz")
    ]
    # a closed gate answers before the run is even looked up
    write_gate = None if writes else "FLOW_RUN_WRITES_DISABLED"
    exec_gate = expected_execute_code(writes, automatable)
    gates = [None, write_gate, write_gate, exec_gate, exec_gate, exec_gate, write_gate]
    mine = every_action(gated, rid)
    nothing = every_action(gated, "run_zzzz")
    for gate, a, b in zip(gates, mine, nothing, strict=True):
        if gate is not None:
            assert code(a) == code(b) == gate


# --------------------------------------------------- import is scope-checked, fails closed


def db_bytes(root: Path) -> bytes:
    """Every byte the store holds: the database and its WAL (or every PostgreSQL row)."""
    return store_bytes(root)


def test_a_project_scoped_import_into_a_personal_only_workspace_is_refused(tmp_path, clock):
    root = make_workspace(tmp_path / "ws", bundles=[])  # policy scopes default: personal
    ctx = open_ctx(root)
    try:
        data = bundle("flow_team", [step("flow_team", 1)], scope="project")
        (root / "flows").mkdir()
        before = sorted(p.name for p in (root / "flows").iterdir())
        refused = import_flow(ctx, dump_bundle(parse_bundle(data)))
        assert code(refused) == "FLOW_IMPORT_SCOPE_DENIED" and refused.status == 403
        assert "project" not in json.dumps(to_json(refused))  # the code names no scope
        with ctx.store.read() as tx:
            assert tx.list_proposals("flow_import") == []
        assert sorted(p.name for p in (root / "flows").iterdir()) == before
    finally:
        ctx.close()


def test_a_real_project_starter_bundle_is_refused_the_same_way(tmp_path, clock):
    text = (starter_dir() / "flow_overseer_handover.json").read_text(encoding="utf-8")
    ctx = open_ctx(make_workspace(tmp_path / "ws", bundles=[]))
    try:
        assert code(import_flow(ctx, text, "json")) == "FLOW_IMPORT_SCOPE_DENIED"
        assert ctx.catalog.entries() == []
    finally:
        ctx.close()


def test_approval_rechecks_the_scope_against_the_policy_of_that_moment(tmp_path, clock):
    root = make_workspace(tmp_path / "ws", bundles=[], policy={"scopes": ["personal", "project"]})
    ctx = open_ctx(root)
    try:
        data = bundle("flow_team", [step("flow_team", 1)], scope="project")
        pid = import_flow(ctx, dump_bundle(parse_bundle(data)))["proposal"]["proposal_id"]
        narrowed = with_posture(ctx, scopes=["personal"])
        assert code(review_import(narrowed, pid, True)) == "FLOW_IMPORT_SCOPE_DENIED"
        assert not (root / "flows" / "flow_team.1.0.0.flow.yaml").exists()
        with ctx.store.read() as tx:
            assert tx.load_proposal(pid)[0]["status"] == "pending"
    finally:
        ctx.close()


# ------------------------------------------------------------ actor privacy (issue 10)


def test_actor_key_is_created_once_with_mode_0600_and_never_in_the_db(tmp_path, clock):
    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        consent_for(ctx, rid)
        submit_review(ctx, {"run_id": rid, "intent": "outcome"})
    finally:
        ctx.close()
    key_file = root / ".noma-workbench" / "actor.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = bytes.fromhex(key_file.read_text().strip())
    assert len(key) == 32
    db = db_bytes(root)
    assert ACTOR.encode() not in db
    assert hashlib.sha256(ACTOR.encode()).hexdigest().encode() not in db  # no unsalted hash
    assert key.hex().encode() not in db and key not in db
    keyed = hmac.new(key, ACTOR.encode(), hashlib.sha256).hexdigest()
    assert keyed.encode() in db  # what is stored is the keyed hash
    again = open_ctx(root)  # a second opening reuses the key: the same actor, the same hash
    try:
        assert again.actor.hash == keyed
        assert get_run(again, {"run_id": rid})["run"]["provenance"]["actor"] == keyed
    finally:
        again.close()


def test_the_same_actor_hashes_differently_in_two_workspaces(tmp_path, clock):
    a = open_ctx(make_workspace(tmp_path / "a"))
    b = open_ctx(make_workspace(tmp_path / "b"))
    try:
        assert a.actor.hash != b.actor.hash
        assert a.actor_named(OTHER, ["personal"]).hash != b.actor_named(OTHER, ["personal"]).hash
        assert a.actor_named(ACTOR, ["personal"]).hash == a.actor.hash
        run_a, run_b = started(a), started(b)
        assert run_a["provenance"]["actor"] != run_b["provenance"]["actor"]
    finally:
        a.close()
        b.close()


def _load_key(folder: str, barrier: Any, queue: Any) -> None:
    from core.flow.actor_key import load_actor_key

    barrier.wait()
    queue.put(load_actor_key(Path(folder)).hex())


def test_processes_racing_on_first_use_agree_on_one_key(tmp_path):
    import multiprocessing

    state = tmp_path / "state"
    state.mkdir()
    mp = multiprocessing.get_context("fork")
    n = 6
    barrier, queue = mp.Barrier(n), mp.Queue()
    procs = [mp.Process(target=_load_key, args=(str(state), barrier, queue)) for _ in range(n)]
    for p in procs:
        p.start()
    keys = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(set(keys)) == 1
    assert [p.name for p in state.iterdir()] == ["actor.key"]  # no temp file left behind


def test_a_loosened_key_file_is_closed_again_and_a_corrupt_one_is_a_fault(tmp_path):
    from core.flow.actor_key import ActorKeyError, load_actor_key

    key = load_actor_key(tmp_path)
    path = tmp_path / "actor.key"
    path.chmod(0o644)
    assert load_actor_key(tmp_path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("not a key\n")
    with pytest.raises(ActorKeyError):
        load_actor_key(tmp_path)  # never silently re-keyed: personal runs would be orphaned
    assert path.read_text() == "not a key\n"


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "json", "nested too deeply"),
        ("a: " + "[" * 50_000 + "]" * 50_000, "yaml", "nested too deeply"),
        ('{"flow": {}, "flow": {}, "steps": []}', "json", "a key appears twice"),
        ("flow: {}\nflow: {}\nsteps: []\n", "yaml", "a key appears twice"),
        (" " * (3 * 1024 * 1024), "json", "larger than"),
        ("flow: &a {steps: [*a]}\nsteps: [*a]\n", "yaml", ""),
    ],
)
def test_hostile_bundle_text_is_a_coded_refusal_never_a_crash(ctx, text, fmt, message):
    refused = import_flow(ctx, text, fmt)
    assert code(refused) == "BAD_REQUEST"
    assert message in refused.problems[0].message
    with ctx.store.read() as tx:
        assert tx.list_proposals("flow_import") == []


@sqlite_only("stores from before keyed hashes were SQLite files; PostgreSQL is born keyed")
def test_a_store_from_before_keyed_hashes_is_rekeyed_for_the_workspace_actor(tmp_path, clock):
    """Rows written under the old scheme (sha256 of the name) move to the keyed hash on
    first open, so the operator's personal runs stay theirs and the plain hash is gone."""
    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    keyed = ctx.actor.hash
    legacy = hashlib.sha256(ACTOR.encode()).hexdigest()
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        consent_for(ctx, rid)
        submit_review(ctx, {"run_id": rid, "intent": "outcome"})
        with ctx.store.write() as tx:  # rewind to how an old store held the actor
            for table in ("runs", "proposals"):
                tx.execute(
                    f"UPDATE {table} SET actor_hash = ?, record = replace(record, ?, ?)",
                    (legacy, keyed, legacy),
                )
            tx.execute("UPDATE consents SET actor_hash = ?", (legacy,))
            tx.execute("DELETE FROM meta WHERE key = 'actor_hash_scheme'")
    finally:
        ctx.close()
    assert legacy.encode() in db_bytes(root)
    again = open_ctx(root)
    try:
        run = get_run(again, {"run_id": rid})["run"]
        assert run["provenance"]["actor"] == keyed
        conn = again.store.connection()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for table in ("runs", "consents", "proposals"):
            hashes = {r[0] for r in conn.execute(f"SELECT actor_hash FROM {table}")}
            assert hashes == {keyed}, table
        assert legacy.encode() not in db_bytes(root)
    finally:
        again.close()


def test_project_starter_flows_and_their_runs_stay_invisible_to_a_personal_only_actor(
    tmp_path, clock
):
    root = make_workspace(tmp_path / "ws", bundles=[], policy={"scopes": ["personal", "project"]})
    (root / "flows").mkdir()
    source = starter_dir() / "flow_multi_repo_change.json"
    (root / "flows" / source.name).write_bytes(source.read_bytes())
    ctx = open_ctx(root)
    try:
        run = run_by_hand(ctx, json.loads(source.read_text()), 2, "not_applicable")
        solo = ctx.as_actor(ctx.actor_named(OTHER, ["personal"]))
        assert code(get_flow(solo, "flow_multi_repo_change")) == "unknown_flow"
        assert code(get_run(solo, {"run_id": run["run_id"]})) == "unknown_run"
        assert list_runs(solo, {})["runs"] == []
        assert "flow_multi_repo_change" not in {f["flow_id"] for f in list_flows(solo)["flows"]}
        teammate = ctx.as_actor(ctx.actor_named(OTHER, ["personal", "project"]))
        assert get_run(teammate, {"run_id": run["run_id"]})["run"]["status"] == "done"
    finally:
        ctx.close()


def test_a_key_candidate_left_by_a_killed_process_is_swept(tmp_path):
    import os
    import time

    from core.flow.actor_key import load_actor_key

    stale = tmp_path / ".actor.key.4242.deadbeef"
    stale.write_text("ab" * 32 + "\n")  # written, never linked: the process died here
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fresh = tmp_path / ".actor.key.4343.cafe"  # another process, mid-creation: left alone
    fresh.write_text("cd" * 32 + "\n")
    key = load_actor_key(tmp_path)
    assert key != bytes.fromhex("ab" * 32)
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name, "actor.key"]


def _weekly_at_review(ctx: FlowContext) -> str:
    """A weekly-review run whose human_review step 3 is on the frontier with evidence."""
    rid = started(ctx)["run_id"]
    ok = [
        advance_step(ctx, {"run_id": rid, "step_id": "flow_weekly_review#1", "to_status": s})
        for s in ("in_progress",)
    ]
    record_evidence(
        ctx,
        {
            "run_id": rid,
            "step_id": "flow_weekly_review#1",
            "evidence_ref": "op_1",
            "pointer_kind": "artifact",
        },
    )
    ok.append(
        advance_step(ctx, {"run_id": rid, "step_id": "flow_weekly_review#1", "to_status": "done"})
    )
    ok.append(
        advance_step(
            ctx,
            {
                "run_id": rid,
                "step_id": "flow_weekly_review#2",
                "to_status": "skipped",
                "skip_reason": "not_applicable",
            },
        )
    )
    ok.append(
        record_evidence(
            ctx,
            {
                "run_id": rid,
                "step_id": "flow_weekly_review#3",
                "evidence_ref": "a" * 64,
                "pointer_kind": "hash",
            },
        )
    )
    assert all(isinstance(r, dict) for r in ok), ok
    return rid


def test_mcp_cannot_approve_a_human_review_step(tmp_path: Path) -> None:
    from core.mcp.flow_tool import call

    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    try:
        rid = _weekly_at_review(ctx)
        step3 = {"run_id": rid, "step_id": "flow_weekly_review#3", "to_status": "done"}
        refused = call(root, "advance", {**step3, "approve": True})
        assert refused == {
            "ok": False,
            "code": "FLOW_HUMAN_APPROVAL_REQUIRED",
            "status": 403,
            "error": "approving a human review is a human's act, not an agent's",
        }
        # also with the agent's own run id and any other spelling of approval
        assert call(root, "advance", {**step3, "approve": 1})["code"] in (
            "FLOW_HUMAN_APPROVAL_REQUIRED",
            "BAD_REQUEST",
        )
        run = to_json(get_run(ctx, {"run_id": rid}))["run"]
        assert run["step_states"][2] == {
            "step_id": "flow_weekly_review#3",
            "status": "pending",
            "evidence_ref": "a" * 64,
            "verified": False,
        }
        assert run["status"] == "in_progress"
        # nor can an agent review the outcome proposal (review-before-write has a human reviewer)
        assert call(root, "review", {"proposal_id": "prop_x", "approve": True})["code"] == (
            "BAD_REQUEST"  # not an MCP action at all
        )
        # the human (CLI / pane actor) still approves
        done = advance_step(ctx, {**step3, "approve": True})
        assert isinstance(done, dict) and done["run"]["step_states"][2]["verified"] is True
    finally:
        ctx.close()


def test_an_agent_actor_is_refused_approval_on_any_surface(ctx: FlowContext) -> None:
    rid = _weekly_at_review(ctx)
    agent = ctx.as_actor(ctx.actor.as_agent())
    step3 = {"run_id": rid, "step_id": "flow_weekly_review#3", "to_status": "done"}
    assert code(advance_step(agent, {**step3, "approve": True})) == "FLOW_HUMAN_APPROVAL_REQUIRED"
    proposal = submit_review(ctx, {"run_id": rid, "intent": "x"})["proposal"]
    from core.flow.proposals import review_proposal

    pid = proposal["proposal_id"]
    assert code(review_proposal(agent, {"proposal_id": pid, "approve": True})) == (
        "FLOW_HUMAN_APPROVAL_REQUIRED"
    )


def test_two_consents_never_execute_one_step_twice(tmp_path: Path, clock: Any) -> None:
    """Two consents for the same run, parallel executes of the same step: one lane call,
    one execution row, and only the consent that started it is charged."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from core.flow.consent import consent_key

    lane = FakeLane(cost=7, gate=threading.Event())
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        consents = [consent_for(ctx, rid, cap=50) for _ in range(2)]
        posts = [
            {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": consents[i % 2]}
            for i in range(8)
        ]
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(execute_automatable, ctx, p) for p in posts]
            early = [f.result(timeout=30) for f in futures[1:] if _done_within(f, 1.0)]
            lane.gate.set()
            results = [f.result(timeout=30) for f in futures]
        assert len(lane.calls) == 1
        named = {r["execution"]["execution_id"] for r in results}
        assert len(named) == 1
        for r in results:
            assert "in_flight" not in r
            assert r["execution"]["status"] in ("running", "completed")
        assert all(r["execution"]["status"] == "running" for r in early)
        conn = ctx.store.connection()
        assert conn.execute("SELECT COUNT(*) FROM executions").fetchone()[0] == 1
        charged = {
            row[0]: (row[1], row[2])
            for row in conn.execute(
                "SELECT consent_key, cost_consumed_units, cost_reserved_units FROM consents"
            )
        }
        assert sorted(charged.values()) == [(0, 0), (7, 0)]
        # after completion the step is done; the other consent cannot rerun it
        other = execute_automatable(
            ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": consents[1]}
        )
        if isinstance(other, FlowRefusal):
            assert other.code == "FLOW_STEP_OUT_OF_ORDER"
        else:
            assert other["execution"]["execution_id"] in named
        assert len(lane.calls) == 1
        assert consent_key(consents[0]) in charged
    finally:
        ctx.close()


def _done_within(future: Any, seconds: float) -> bool:
    try:
        future.result(timeout=seconds)
    except TimeoutError:
        return False
    return True


def test_an_in_flight_post_with_a_stranger_consent_is_refused(tmp_path: Path) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    lane = FakeLane(gate=threading.Event())
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid)
        post = {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(execute_automatable, ctx, post)
            while not lane.calls:
                threading.Event().wait(0.01)
            other = ctx.as_actor(ctx.actor_named(OTHER, ["personal"]))
            assert code(execute_automatable(other, post)) == "unknown_run"
            forged = {**post, "consent_id": "fcons_" + "9" * 32}
            assert code(execute_automatable(ctx, forged)) == "FLOW_EXECUTION_CONSENT_REQUIRED"
            lane.gate.set()
            assert first.result(timeout=30)["execution"]["status"] == "completed"
        assert len(lane.calls) == 1
    finally:
        ctx.close()


def test_revoking_consent_mid_execution_gives_consent_denied(tmp_path: Path) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from core.flow.consent import revoke_consent

    lane = FakeLane(cost=4, gate=threading.Event())
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=50)
        post = {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(execute_automatable, ctx, post)
            while not lane.calls:
                threading.Event().wait(0.01)
            revoked = revoke_consent(ctx, {"consent": cid})
            assert revoked["consent"]["state"] == "revoked"
            lane.gate.set()
            result = first.result(timeout=30)
        execution = result["execution"]
        assert execution["status"] == "consent_denied" and execution["evidence_ref"] is None
        state = result["run"]["step_states"][0]
        assert state["status"] == "in_progress" and state["verified"] is False
        assert state["evidence_ref"] is None
        assert code(execute_automatable(ctx, post)) == "FLOW_EXECUTION_CONSENT_REQUIRED"
    finally:
        ctx.close()


def test_execute_on_a_finished_run_is_not_in_progress_even_as_a_replay(
    ctx: FlowContext, lane: FakeLane
) -> None:
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    post = {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
    assert execute_automatable(ctx, post)["execution"]["status"] == "completed"
    assert execute_automatable(ctx, post)["execution"]["status"] == "completed"  # replay
    with ctx.store.write() as tx:  # the run ends (abandoned by its operator)
        stored = tx.load_run(rid)
        assert stored is not None
        tx.update_run(stored, {**stored.record, "status": "abandoned"})
    assert code(execute_automatable(ctx, post)) == "FLOW_RUN_NOT_IN_PROGRESS"
    assert len(lane.calls) == 1


def test_a_consent_that_expires_mid_execution_gives_consent_denied(
    tmp_path: Path, clock: Any
) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    lane = FakeLane(cost=2, gate=threading.Event())
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=50, ttl_seconds=60)
        post = {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(execute_automatable, ctx, post)
            while not lane.calls:
                threading.Event().wait(0.01)
            clock.advance(61)
            lane.gate.set()
            result = first.result(timeout=30)
        assert result["execution"]["status"] == "consent_denied"
        assert result["run"]["step_states"][0]["verified"] is False
    finally:
        ctx.close()
