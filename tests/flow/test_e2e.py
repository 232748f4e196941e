"""Tier 3 — e2e: start -> consent -> execute automatable on the pinned version -> evidence
pointer attached -> manual advance on a manual step -> submit review creates a proposal;
an external grant bearer does not satisfy execute; an import with forbidden automatable
steps is refused; imports stay inert until reviewed. The demo flows run for real through
the Skills runtime sandbox when this host can isolate runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.flow import (
    FlowContext,
    FlowRefusal,
    advance_step,
    execute_automatable,
    export_flow,
    get_run,
    import_flow,
    list_flows,
    mint_consent,
    record_evidence,
    review_import,
    start_run,
    submit_review,
)
from core.flow.bundle import dump_bundle, parse_bundle
from core.workspace import Workspace

from .conftest import (
    GATE_MATRIX,
    SHEET_URL,
    SKIP_CYCLE,
    STARTER_FILES,
    automatable_bundle,
    consent_for,
    expected_execute_code,
    forbidden_bundle,
    make_workspace,
    open_ctx,
    run_by_hand,
    started,
    starter_bundle,
    starter_dir,
    step,
    store_bytes,
    with_posture,
    write_bundle,
    write_config,
)

pytestmark = pytest.mark.usefixtures("both_stores")

DEMO_FLOWS = Path(__file__).resolve().parents[2] / "noma_tui" / "demo_workspace" / "flows"


def code(result: object) -> str | None:
    return result.code if isinstance(result, FlowRefusal) else None


def test_whole_automatable_run_on_its_pinned_version(ctx, workspace, clock, lane):
    run = started(ctx, "flow_lead_import", task_ref="task_abc123")
    rid = run["run_id"]
    # the flow changes under the run: a new version replaces the file, step 1 turns manual
    changed = automatable_bundle()
    changed["flow"]["version"] = "2.0.0"
    changed["steps"][0]["automatable"] = "manual"
    (workspace / "flows" / "flow_lead_import.1.0.0.flow.yaml").unlink()
    write_bundle(workspace / "flows", changed)

    cid = consent_for(ctx, rid, cap=20)
    executed = execute_automatable(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
    )
    assert executed["execution"]["status"] == "completed"
    assert executed["run"]["flow_version"] == "1.0.0"
    first = executed["run"]["step_states"][0]
    assert first == {
        "step_id": "flow_lead_import#1",
        "status": "done",
        "evidence_ref": "hash_" + lane.digest,
        "verified": True,
    }
    assert len(lane.calls) == 1 and lane.calls[0].budget_units == 20

    # step 2: automatable but human_review -> execute, then a person approves
    second = execute_automatable(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#2", "consent_id": cid}
    )
    assert second["run"]["step_states"][1]["verified"] is False
    approved = advance_step(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#2", "to_status": "done", "approve": True}
    )
    assert approved["run"]["step_states"][1]["status"] == "done"

    # step 3 is agent_assisted: manual advance only, with an evidence pointer
    s3 = "flow_lead_import#3"
    assert code(execute_automatable(ctx, {"run_id": rid, "step_id": s3, "consent_id": cid})) == (
        "FLOW_STEP_NOT_AUTOMATABLE"
    )
    advance_step(ctx, {"run_id": rid, "step_id": s3, "to_status": "in_progress"})
    record_evidence(
        ctx, {"run_id": rid, "step_id": s3, "evidence_ref": "prop_0042", "pointer_kind": "proposal"}
    )
    record_evidence(
        ctx,
        {
            "run_id": rid,
            "step_id": s3,
            "evidence_ref": "artifact:report#3",
            "pointer_kind": "artifact",
        },
    )
    done = advance_step(ctx, {"run_id": rid, "step_id": s3, "to_status": "done"})
    assert done["run"]["status"] == "done" and done["run"]["flow_version"] == "1.0.0"

    review = submit_review(ctx, {"run_id": rid, "intent": "Leads imported and checked"})
    proposal = review["proposal"]
    assert proposal["kind"] == "flow_run_outcome" and proposal["status"] == "pending"
    assert proposal["run_id"] == rid and proposal["flow_version"] == "1.0.0"
    assert proposal["evidence_refs"][0] == "hash_" + lane.digest
    # the run is unchanged by submitting, and the flow definition untouched
    assert get_run(ctx, {"run_id": rid})["run"] == done["run"]
    assert ctx.catalog.find("flow_lead_import").bundle.version == "2.0.0"
    assert start_run(ctx, {"flow_id": "flow_lead_import", "flow_version": "1.0.0"}).code == (
        "unknown_flow"
    )


def test_external_grant_bearer_does_not_satisfy_execute(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    for bearer in ("fgrant_k3j9a8", "Bearer fgrant_k3j9a8", "fcons_" + "0" * 32, ""):
        result = execute_automatable(
            ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": bearer}
        )
        assert code(result) in ("FLOW_EXECUTION_CONSENT_REQUIRED", "BAD_REQUEST")
    assert lane.calls == []


def test_import_with_forbidden_automatable_is_refused(tmp_path, clock):
    root = make_workspace(tmp_path / "ws", policy={"automatable_forbidden": True})
    ctx = open_ctx(root)
    try:
        auto = dump_bundle(parse_bundle(automatable_bundle()))
        assert code(import_flow(ctx, auto)) == "FLOW_IMPORT_AUTOMATABLE_DENIED"
        # both violations: the external_tool check comes first, deterministically
        both = dump_bundle(parse_bundle(forbidden_bundle()))
        assert code(import_flow(ctx, both)) == "FLOW_IMPORT_EXTERNAL_TOOL_DENIED"
        manual = dump_bundle(parse_bundle(starter_bundle("3.0.0")))
        assert import_flow(ctx, manual)["proposal"]["status"] == "pending"
    finally:
        ctx.close()


def test_imported_flow_stays_inert_until_reviewed(tmp_path, clock):
    source = make_workspace(tmp_path / "src")
    target = make_workspace(tmp_path / "dst", bundles=[])
    src, dst = open_ctx(source), open_ctx(target)
    try:
        from core.flow import export_flow

        text = export_flow(src, "flow_lead_import")["text"]
        imported = import_flow(dst, text)
        proposal = imported["proposal"]
        assert imported["active"] is False
        # one meaning everywhere: `automatable: automatable` (step 3 is agent_assisted)
        assert proposal["automatable_steps"] == ["flow_lead_import#1", "flow_lead_import#2"]
        assert code(start_run(dst, {"flow_id": "flow_lead_import", "flow_version": "1.0.0"})) == (
            "unknown_flow"
        )
        listing = list_flows(dst)
        assert listing["flows"] == []
        automatable_in_source = list_flows(src)["flows"]
        assert {f["flow_id"]: f["automatable_steps"] for f in automatable_in_source}[
            "flow_lead_import"
        ] == len(proposal["automatable_steps"])
        assert listing["pending_imports"][0]["proposal_id"] == proposal["proposal_id"]
        approved = review_import(dst, proposal["proposal_id"], True)
        assert approved["proposal"]["status"] == "approved"
        assert code(review_import(dst, proposal["proposal_id"], True)) == "BAD_REQUEST"
        run = started(dst, "flow_lead_import")
        # approval activates nothing on its own: execution still needs consent and the gates
        gated = with_posture(dst, automatable=False)
        assert code(
            execute_automatable(
                gated,
                {"run_id": run["run_id"], "step_id": "flow_lead_import#1", "consent_id": "fcons_x"},
            )
        ) == ("FLOW_AUTOMATABLE_EXECUTION_DISABLED")
        assert (
            dst.catalog.find("flow_lead_import").bundle
            == src.catalog.find("flow_lead_import").bundle
        )
    finally:
        src.close()
        dst.close()


def test_review_refuses_a_conflicting_version_and_can_reject(tmp_path, clock):
    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    try:
        other = starter_bundle()
        other["steps"][0]["owned_job"] = "Something else entirely"
        pid = import_flow(ctx, dump_bundle(parse_bundle(other)))["proposal"]["proposal_id"]
        assert code(review_import(ctx, pid, True)) == "FLOW_VERSION_CONFLICT"
        assert review_import(ctx, pid, False)["proposal"]["status"] == "rejected"
        assert code(review_import(ctx, "prop_nothere", True)) == "unknown_proposal"
    finally:
        ctx.close()


def test_bad_bundle_import_lists_problems(ctx):
    data = starter_bundle()
    del data["steps"][0]["verification"]
    data["flow"]["version"] = "one"
    refused = import_flow(ctx, dump_bundle_raw(data))
    assert refused.code == "BAD_REQUEST" and refused.status == 400
    assert {p.path for p in refused.problems} >= {"steps[0].verification", "flow.version"}


def dump_bundle_raw(data: dict) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False)


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_whole_run_under_each_gate_setting(tmp_path, clock, writes, automatable):
    root = make_workspace(tmp_path / "ws", writes=writes, automatable=automatable)
    ctx = open_ctx(root)
    try:
        start = start_run(
            ctx,
            {
                "flow_id": "flow_lead_import",
                "flow_version": "1.0.0",
                "inputs": {"sheet_url": SHEET_URL},
            },
        )
        if not writes:
            assert code(start) == "FLOW_RUN_WRITES_DISABLED"
            return
        rid = start["run"]["run_id"]
        minted = mint_consent(
            ctx, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 10}
        )
        expected = expected_execute_code(writes, automatable)
        if expected:
            assert code(minted) == expected
            record_evidence(
                ctx,
                {
                    "run_id": rid,
                    "step_id": "flow_lead_import#1",
                    "evidence_ref": "a" * 64,
                    "pointer_kind": "hash",
                },
            )
            done = advance_step(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "to_status": "done"}
            )
            assert done["run"]["step_states"][0]["status"] == "done"
            return
        cid = minted["consent"]["consent_id"]
        out = execute_automatable(
            ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        )
        assert out["execution"]["status"] == "completed"
    finally:
        ctx.close()


# ------------------------------------------------------------------ the real sandbox


def test_demo_flows_run_for_real_through_the_skills_sandbox(tmp_path, clock):
    """The shipped `gdrive.sheets.read` skill runs in the sandbox on `local_default`."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO_FLOWS, root / "flows")
    write_config(root)
    ctx = FlowContext.open(Workspace.open(root))  # real lanes
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=100)
        dry = execute_automatable(
            ctx,
            {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid, "dry_run": True},
        )
        assert dry["dry_run"] is True and dry["execution"] is None
        out = execute_automatable(
            ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        )
        execution = out["execution"]
        if execution["failure"] == "sandbox_unavailable":
            pytest.skip("this host cannot isolate skill runs (see tests/sandbox)")
        assert execution["status"] == "completed", execution
        assert execution["evidence_ref"].startswith("hash_")
        assert len(execution["evidence_ref"]) == len("hash_") + 64
        assert 1 <= execution["cost_units"] <= 100
        assert out["run"]["step_states"][0]["status"] == "done"
        consent_row = (
            ctx.store.connection()
            .execute("SELECT cost_consumed_units, cost_reserved_units FROM consents")
            .fetchone()
        )
        assert tuple(consent_row) == (execution["cost_units"], 0)
        db = store_bytes(root)
        assert b"Ada Lovelace" not in db and b"analytical.example" not in db
    finally:
        ctx.close()


def test_step_with_only_unsupported_refs_fails_without_charge(tmp_path, clock):
    f = "flow_cli_only"
    data = {
        "flow": {**starter_bundle()["flow"], "flow_id": f, "steps": [f"{f}#1"]},
        "steps": [
            step(f, 1, automatable="automatable", skill_refs=[{"kind": "cli", "id": "noma.check"}])
        ],
    }
    root = make_workspace(tmp_path / "ws", bundles=[data])
    ctx = FlowContext.open(Workspace.open(root))  # the real local lane
    try:
        rid = started(ctx, f)["run_id"]
        cid = consent_for(ctx, rid, cap=10)
        out = execute_automatable(ctx, {"run_id": rid, "step_id": f"{f}#1", "consent_id": cid})
        assert out["execution"]["status"] == "failed"
        assert out["execution"]["failure"] == "unsupported_ref"
        assert out["execution"]["cost_units"] == 0
        assert out["run"]["step_states"][0]["status"] == "in_progress"
    finally:
        ctx.close()


# ------------------------------------------------------- Knowtation's starter bundles


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
@pytest.mark.parametrize("name", STARTER_FILES)
def test_starter_bundle_imports_runs_to_done_and_exports_as_it_came(
    tmp_path, clock, name, writes, automatable
):
    source = starter_dir() / name
    text = source.read_text(encoding="utf-8")
    original = json.loads(text)
    root = make_workspace(
        tmp_path / "ws",
        bundles=[],
        writes=writes,
        automatable=automatable,
        policy={"scopes": ["personal", "project"]},
    )
    ctx = open_ctx(root)
    try:
        imported = import_flow(ctx, text, "json")  # as it is: no edit
        assert imported["active"] is False, imported
        pid = imported["proposal"]["proposal_id"]
        assert imported["proposal"]["automatable_steps"] == [
            s["step_id"] for s in original["steps"] if s["automatable"] == "automatable"
        ]
        assert review_import(ctx, pid, True)["proposal"]["status"] == "approved"
        flow = original["flow"]
        assert (root / "flows" / f"{flow['flow_id']}.{flow['version']}.flow.json").is_file()
        listed = {f["flow_id"]: f for f in list_flows(ctx)["flows"]}
        assert listed[flow["flow_id"]]["steps"] == len(original["steps"])
        assert list_flows(ctx)["invalid"] == []
        exported = export_flow(ctx, flow["flow_id"])
        assert exported["format"] == "json"
        assert json.loads(exported["text"]) == original  # equal modulo key order
        if not writes:
            refused = start_run(ctx, {"flow_id": flow["flow_id"], "flow_version": flow["version"]})
            assert code(refused) == "FLOW_RUN_WRITES_DISABLED"
            return
        which = STARTER_FILES.index(name)
        final = run_by_hand(ctx, original, skip_index=1, reason=SKIP_CYCLE[which % 3])
        assert [s["status"] for s in final["step_states"]].count("skipped") == 1
        submitted = submit_review(ctx, {"run_id": final["run_id"], "intent": "Run outcome"})
        assert submitted["schema"] == "knowtation.flow_run/v0"
        assert submitted["run"] == final
        assert submitted["proposal_id"] == submitted["proposal"]["proposal_id"]
        assert submitted["proposal"]["status"] == "pending"
        assert json.loads(export_flow(ctx, flow["flow_id"])["text"]) == original
    finally:
        ctx.close()


def test_agent_assisted_starter_steps_are_advanced_by_hand_never_executed(tmp_path, clock):
    text = (starter_dir() / "flow_capture_to_note.json").read_text(encoding="utf-8")
    root = make_workspace(tmp_path / "ws", bundles=[])
    ctx = open_ctx(root)
    try:
        pid = import_flow(ctx, text, "json")["proposal"]["proposal_id"]
        review_import(ctx, pid, True)
        rid = start_run(
            ctx,
            {
                "flow_id": "flow_capture_to_note",
                "flow_version": "0.1.0",
                "inputs": {"capture_path": "inbox/2026-06-20.md"},
            },
        )["run"]["run_id"]
        cid = consent_for(ctx, rid)
        out = execute_automatable(
            ctx, {"run_id": rid, "step_id": "flow_capture_to_note#1", "consent_id": cid}
        )
        assert code(out) == "FLOW_STEP_NOT_AUTOMATABLE"
    finally:
        ctx.close()


# ------------------------------------------ issue 11: review outcomes, consents, version pin


def test_cli_reviews_outcomes_and_lists_and_revokes_consents(tmp_path, capsys):
    import json

    from core import cli

    root = make_workspace(tmp_path / "ws")

    def noma(*argv: str) -> tuple[int, dict]:
        capsys.readouterr()
        rc = cli.main([*argv, "--root", str(root), "--json"])
        out = capsys.readouterr().out
        return rc, (json.loads(out) if out.strip() else {})

    # flow_version is required: no silent "newest"; --latest is the explicit choice
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["flow", "run", "start", "flow_lead_import", "--root", str(root)])
    assert exit_info.value.code == 2
    assert "--version" in capsys.readouterr().err
    lead = ("--input", f"sheet_url={SHEET_URL}")
    rc, latest = noma("flow", "run", "start", "flow_lead_import", "--latest", *lead)
    assert rc == 0 and latest["run"]["flow_version"] == "1.0.0"
    rc, pinned = noma("flow", "run", "start", "flow_lead_import", "--version", "1.0.0", *lead)
    rid = pinned["run"]["run_id"]

    rc, minted = noma("flow", "run", "consent", rid, "--lane", "local_default", "--cost-cap", "20")
    assert rc == 0
    cid = minted["consent"]["consent_id"]
    rc, listed = noma("flow", "run", "consents", rid)
    assert rc == 0 and listed["schema"] == "noma.flow_consent_list/v0"
    [entry] = listed["consents"]
    assert entry["state"] == "active" and entry["cost_cap_units"] == 20
    assert cid not in json.dumps(listed)  # the bearer id is shown once, at minting
    rc, revoked = noma("flow", "run", "consent", "revoke", entry["consent_ref"])
    assert rc == 0 and revoked["consent"]["state"] == "revoked"
    rc, refused = noma(
        "flow", "run", "execute", rid, "flow_lead_import#1", "--consent", cid, "--dry-run"
    )
    assert rc == 1 and refused["code"] == "FLOW_EXECUTION_CONSENT_REQUIRED"
    rc, unknown = noma("flow", "run", "consent", "revoke", "fcons_" + "0" * 32)
    assert rc == 1 and unknown["code"] == "unknown_consent"

    rc, submitted = noma("flow", "run", "submit-review", rid, "--intent", "Lead import outcome")
    pid = submitted["proposal"]["proposal_id"]
    rc, pending = noma("flow", "proposals", "--status", "pending")
    assert rc == 0 and [p["proposal_id"] for p in pending["proposals"]] == [pid]
    rc, approved = noma("flow", "review", pid, "--approve")
    assert rc == 0 and approved["proposal"]["status"] == "approved"
    rc, again = noma("flow", "review", pid, "--reject")
    assert rc == 1 and again["code"] == "BAD_REQUEST"
    rc, none_left = noma("flow", "proposals", "--status", "pending")
    assert none_left["proposals"] == []
    rc, all_of_them = noma("flow", "proposals", "--kind", "flow_run_outcome")
    assert [p["status"] for p in all_of_them["proposals"]] == ["approved"]
    # human output lists them too
    capsys.readouterr()
    assert cli.main(["flow", "proposals", "--root", str(root)]) == 0
    assert pid in capsys.readouterr().out
