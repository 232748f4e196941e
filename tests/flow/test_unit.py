"""Tier 1 — unit: records validate their schemas, frontier math, human_review is never
auto-verified, a sub-gate that is off makes its handlers unreachable; plus the definition
rules (ids, semver, enums, anatomy, problems with field paths) and posture defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from core.flow import (
    FlowRefusal,
    advance_step,
    execute_automatable,
    get_run,
    list_runs,
    mint_consent,
    record_evidence,
    start_run,
    submit_review,
)
from core.flow.bundle import BundleError, dump_bundle, parse_bundle, parse_bundle_text
from core.flow.errors import MESSAGES, STATUS, FlowCode, success_status
from core.flow.frontier import frontier_index, run_status
from core.flow.ids import SEMVER, actor_hash, semver_key
from core.flow.posture import Posture
from core.flow.records import Consent, Execution, FlowRun, Proposal, StepState

from .conftest import (
    ACTOR,
    GATE_MATRIX,
    SHEET_URL,
    STARTER_FILES,
    automatable_bundle,
    bundle,
    consent_for,
    expected_execute_code,
    expected_write_code,
    make_workspace,
    open_ctx,
    started,
    starter_bundle,
    starter_dir,
    step,
    with_posture,
)

pytestmark = pytest.mark.usefixtures("both_stores")


def code(result: Any) -> str | None:
    return result.code if isinstance(result, FlowRefusal) else None


# ------------------------------------------------------------------------- records


def test_consent_record_validates_flow_execution_consent_v0(ctx, clock):
    run = started(ctx, "flow_lead_import")
    result = mint_consent(
        ctx, {"run_id": run["run_id"], "allowed_lanes": ["local_default"], "cost_cap_units": 40}
    )
    consent = Consent.model_validate(result["consent"])
    assert result["schema"] == "knowtation.flow_execution_consent_mint/v0"
    assert consent.schema_ == "knowtation.flow_execution_consent/v0"
    assert consent.consent_id.startswith("fcons_")
    assert consent.run_id == run["run_id"] and consent.cost_consumed_units == 0
    assert consent.actor_hash == actor_hash(ctx.actor_key, ACTOR)
    assert set(result["consent"]) == {
        "schema",
        "consent_id",
        "vault_id",
        "scope",
        "run_id",
        "flow_id",
        "flow_version",
        "allowed_lanes",
        "cost_cap_units",
        "cost_consumed_units",
        "actor_hash",
        "expires_at",
        "revoked_at",
    }


def test_execution_result_validates_execute_automatable_v0(ctx, clock, lane):
    run = started(ctx, "flow_lead_import")
    cid = consent_for(ctx, run["run_id"])
    result = execute_automatable(
        ctx, {"run_id": run["run_id"], "step_id": "flow_lead_import#1", "consent_id": cid}
    )
    assert result["schema"] == "knowtation.flow_execute_automatable/v0"
    execution = Execution.model_validate(result["execution"])
    FlowRun.model_validate(result["run"])
    assert execution.status == "completed" and execution.execution_id.startswith("fexec_")
    assert execution.evidence_ref == "hash_" + lane.digest
    assert execution.cost_units == lane.cost and execution.model_lane == "local_default"


def test_run_and_proposal_records_validate(ctx, clock):
    run = started(ctx)
    FlowRun.model_validate(run)
    assert run["status"] == "in_progress" and run["etag"] == "r1"
    assert [s["status"] for s in run["step_states"]] == ["pending"] * 3
    proposal = submit_review(ctx, {"run_id": run["run_id"], "intent": "Weekly outcome"})
    Proposal.model_validate(proposal["proposal"])


# -------------------------------------------------------------------- frontier math


def states(*statuses: str) -> list[dict[str, Any]]:
    return [{"step_id": f"flow_x#{i}", "status": s} for i, s in enumerate(statuses, 1)]


@pytest.mark.parametrize(
    ("statuses", "frontier", "status"),
    [
        (("pending", "pending"), 0, "in_progress"),
        (("done", "pending"), 1, "in_progress"),
        (("skipped", "in_progress", "pending"), 1, "in_progress"),
        (("done", "blocked", "pending"), 1, "blocked"),
        (("done", "skipped"), None, "done"),
    ],
)
def test_ordinal_frontier_is_the_first_unfinished_step(statuses, frontier, status):
    assert frontier_index(states(*statuses)) == frontier
    assert run_status(states(*statuses)) == status


def test_only_the_frontier_step_may_move(ctx, clock):
    run = started(ctx)
    rid = run["run_id"]
    assert (
        code(
            advance_step(
                ctx, {"run_id": rid, "step_id": "flow_weekly_review#2", "to_status": "in_progress"}
            )
        )
        == "FLOW_STEP_OUT_OF_ORDER"
    )
    ok = advance_step(
        ctx, {"run_id": rid, "step_id": "flow_weekly_review#1", "to_status": "in_progress"}
    )
    assert ok["run"]["step_states"][0]["status"] == "in_progress"
    assert sum(s["status"] == "in_progress" for s in ok["run"]["step_states"]) == 1


def test_done_needs_verified_when_evidence_required(ctx, clock):
    rid = started(ctx)["run_id"]
    s1 = "flow_weekly_review#1"
    refused = advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "done"})
    assert code(refused) == "FLOW_VERIFICATION_UNSATISFIED" and refused.status == 403
    record_evidence(
        ctx, {"run_id": rid, "step_id": s1, "evidence_ref": "op_1", "pointer_kind": "artifact"}
    )
    done = advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "done"})
    assert done["run"]["step_states"][0] == {
        "step_id": s1,
        "status": "done",
        "evidence_ref": "op_1",
        "verified": True,
    }


@pytest.mark.parametrize("reason", ["policy", "not_applicable", "blocked_dependency"])
def test_a_prose_when_not_to_run_step_skips_with_each_reason(ctx, clock, reason):
    rid = started(ctx)["run_id"]
    s1 = "flow_weekly_review#1"
    step = ctx.catalog.find("flow_weekly_review").bundle.steps[0]
    assert isinstance(step.when_not_to_run, str)  # prose, as the spec types it
    ok = advance_step(
        ctx, {"run_id": rid, "step_id": s1, "to_status": "skipped", "skip_reason": reason}
    )
    assert ok["schema"] == "knowtation.flow_run/v0"
    assert ok["run"]["step_states"][0] == {
        "step_id": s1,
        "status": "skipped",
        "evidence_ref": None,
        "verified": False,
        "skip_reason": reason,
    }
    assert get_run(ctx, {"run_id": rid})["run"]["step_states"][0]["skip_reason"] == reason
    StepState.model_validate(ok["run"]["step_states"][0])


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({}, "skip_reason"),
        ({"skip_reason": "because I said so"}, "skip_reason"),
        ({"skip_reason": "superseded"}, "skip_reason"),
        ({"skip_reason": ""}, "skip_reason"),
        ({"skip_reason": ["policy"]}, "skip_reason"),
    ],
)
def test_a_skip_without_a_reason_or_with_free_text_is_refused(ctx, clock, extra, path):
    rid = started(ctx)["run_id"]
    s1 = "flow_weekly_review#1"
    before = get_run(ctx, {"run_id": rid})["run"]
    refused = advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "skipped", **extra})
    assert refused.code == "BAD_REQUEST" and refused.status == 400
    assert [p.path for p in refused.problems] == [path]
    assert get_run(ctx, {"run_id": rid})["run"] == before  # nothing changed


def test_a_skip_reason_on_anything_but_a_skip_is_refused(ctx, clock):
    rid = started(ctx)["run_id"]
    refused = advance_step(
        ctx,
        {
            "run_id": rid,
            "step_id": "flow_weekly_review#1",
            "to_status": "in_progress",
            "skip_reason": "policy",
        },
    )
    assert refused.code == "BAD_REQUEST"


def test_human_review_is_never_auto_verified(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    first = execute_automatable(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
    )
    assert first["run"]["step_states"][0]["status"] == "done"
    second = execute_automatable(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#2", "consent_id": cid}
    )
    state = second["run"]["step_states"][1]
    assert second["execution"]["status"] == "completed"
    assert state["verified"] is False and state["status"] == "in_progress"
    assert second["execution"]["evidence_ref"] is None  # verification not satisfied
    assert state["evidence_ref"] == "hash_" + lane.digest  # for the human reviewer
    # only the human's approval over that evidence finishes it
    assert (
        code(
            advance_step(ctx, {"run_id": rid, "step_id": "flow_lead_import#2", "to_status": "done"})
        )
        == "FLOW_VERIFICATION_UNSATISFIED"
    )
    done = advance_step(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#2", "to_status": "done", "approve": True}
    )
    assert done["run"]["step_states"][1]["verified"] is True


def test_inactive_verification_kinds_parse_but_refuse_done(tmp_path, clock):
    from .conftest import make_workspace

    f = "flow_checks"
    data = bundle(
        f, [step(f, 1, kind="test_pass"), step(f, 2, kind="value_match", evidence_required=False)]
    )
    ctx = open_ctx(make_workspace(tmp_path / "w", [data]))
    try:
        rid = started(ctx, f)["run_id"]
        record_evidence(
            ctx,
            {
                "run_id": rid,
                "step_id": f"{f}#1",
                "evidence_ref": "t1",
                "pointer_kind": "test_result",
            },
        )
        assert (
            code(advance_step(ctx, {"run_id": rid, "step_id": f"{f}#1", "to_status": "done"}))
            == "FLOW_VERIFICATION_UNSATISFIED"
        )
    finally:
        ctx.close()


# ----------------------------------------------------------------------- the gates


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_sub_gate_off_makes_handlers_unreachable(ctx, clock, writes, automatable):
    """The test hook: with a gate off the handler never parses or touches the store."""
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    gated = with_posture(ctx, writes=writes, automatable=automatable)
    statements: list[str] = []
    ctx.store.set_trace(statements.append)
    garbage = {"not": "a request"}
    write_code = expected_write_code(writes)
    exec_code = expected_execute_code(writes, automatable)
    for handler in (start_run, advance_step, record_evidence, submit_review):
        if write_code:
            assert code(handler(gated, garbage)) == write_code
    for handler in (mint_consent, execute_automatable):
        if exec_code:
            assert code(handler(gated, garbage)) == exec_code
    if write_code and exec_code:
        assert statements == [], "a gated-off handler reached the store"
    # reads stay on the read path whatever the gates say
    assert get_run(gated, {"run_id": rid})["run"]["run_id"] == rid
    assert list_runs(gated, {})["runs"][0]["run_id"] == rid
    if not exec_code:
        ok = execute_automatable(
            gated,
            {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid, "dry_run": True},
        )
        assert ok["dry_run"] is True


def test_both_gates_are_off_by_default():
    posture = Posture.from_config({}, {})
    assert posture.gates.run_writes_enabled is False
    assert posture.gates.automatable_execution_enabled is False
    assert posture.policy.scopes == ["personal"]


def test_bad_posture_config_fails_closed():
    posture = Posture.from_config(
        {"run_writes_enabled": "yes", "automatable_execution_enabled": 1},
        {"cost_cap_units": -5},
    )
    assert posture.gates.run_writes_enabled is False
    assert posture.gates.automatable_execution_enabled is False
    assert posture.policy.automatable_forbidden is True and posture.policy.cost_cap_units == 0
    assert {p.path.split(".")[0] for p in posture.problems} == {"gates", "policy"}


# --------------------------------------------------------------------- consent math


def test_consent_cost_cap_is_lowered_to_policy_max_and_ttl_capped(ctx, clock):
    rid = started(ctx, "flow_lead_import")["run_id"]
    tight = with_posture(ctx, cost_cap_units=25, consent_ttl_max_seconds=10**6)
    result = mint_consent(
        tight,
        {
            "run_id": rid,
            "allowed_lanes": ["local_default"],
            "cost_cap_units": 1000,
            "ttl_seconds": 10**6,
        },
    )
    assert result["consent"]["cost_cap_units"] == 25
    assert result["consent"]["expires_at"] == "2026-06-21T12:00:00Z"  # 86,400 s at most
    default = mint_consent(
        ctx, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 5}
    )
    assert default["consent"]["expires_at"] == "2026-06-20T13:00:00Z"  # 3,600 s default


def test_consent_lanes_must_be_non_empty_and_within_policy(ctx, clock):
    rid = started(ctx, "flow_lead_import")["run_id"]
    assert (
        code(mint_consent(ctx, {"run_id": rid, "allowed_lanes": [], "cost_cap_units": 5}))
        == "BAD_REQUEST"
    )
    assert (
        code(
            mint_consent(
                ctx, {"run_id": rid, "allowed_lanes": ["cloud_premium"], "cost_cap_units": 5}
            )
        )
        == "FLOW_EXECUTION_LANE_DENIED"
    )
    assert (
        code(
            mint_consent(ctx, {"run_id": rid, "allowed_lanes": ["warp_drive"], "cost_cap_units": 5})
        )
        == "BAD_REQUEST"
    )


def test_cloud_premium_without_a_provider_is_lane_denied(ctx, clock):
    rid = started(ctx, "flow_lead_import")["run_id"]
    both = with_posture(ctx, allowed_lanes=["local_default", "cloud_premium"])
    cid = consent_for(both, rid, allowed_lanes=["local_default", "cloud_premium"])
    refused = execute_automatable(
        both,
        {
            "run_id": rid,
            "step_id": "flow_lead_import#1",
            "consent_id": cid,
            "model_lane": "cloud_premium",
        },
    )
    assert code(refused) == "FLOW_EXECUTION_LANE_DENIED"


# ---------------------------------------------------------------------- definitions


@pytest.mark.parametrize("version", ["1.0.0", "0.12.3", "10.0.0"])
def test_semver_accepts(version):
    assert SEMVER.match(version)


@pytest.mark.parametrize(
    "version", ["1.0", "v1.0.0", "01.0.0", "1.0.0.0", "", "10.0.0-rc.1", "1.0.0+build"]
)
def test_semver_is_strictly_major_minor_patch(version):
    assert not SEMVER.match(version)


def test_semver_orders_numerically():
    ordered = sorted(["1.10.0", "1.2.0", "0.9.9", "1.9.0"], key=semver_key)
    assert ordered == ["0.9.9", "1.2.0", "1.9.0", "1.10.0"]


def test_bundle_parses_the_starter():
    b = parse_bundle(starter_bundle())
    assert b.flow_id == "flow_weekly_review" and [s.ordinal for s in b.steps] == [1, 2, 3]
    assert b.steps[1].when_not_to_run == "When it does not apply."


@pytest.mark.parametrize("missing", ["trigger", "when_not_to_run", "output_shape", "verification"])
def test_anatomy_rule_a_step_without_its_parts_is_not_a_step(missing):
    data = starter_bundle()
    del data["steps"][1][missing]
    with pytest.raises(BundleError) as err:
        parse_bundle(data)
    paths = {p.path: p.message for p in err.value.problems}
    assert f"steps[1].{missing}" in paths
    assert "anatomy rule" in paths[f"steps[1].{missing}"]


def test_bad_bundle_lists_every_problem_with_its_field_path():
    data = starter_bundle()
    data["flow"]["flow_id"] = "Weekly Review"
    data["flow"]["version"] = "1.0"
    data["flow"]["scope"] = "galaxy"
    data["steps"][0]["verification"]["kind"] = "vibes"
    data["steps"][1]["automatable"] = "sometimes"
    data["steps"][1]["ordinal"] = 7
    data["steps"][2]["skill_refs"] = [{"kind": "teleport", "id": "x"}]
    data["steps"][2]["surprise"] = True
    del data["steps"][2]["trigger"]
    with pytest.raises(BundleError) as err:
        parse_bundle(data)
    paths = {p.path for p in err.value.problems}
    assert {
        "flow.flow_id",
        "flow.version",
        "flow.scope",
        "steps[0].verification.kind",
        "steps[1].automatable",
        "steps[1].ordinal",
        "steps[2].skill_refs[0].kind",
        "steps[2].surprise",
        "steps[2].trigger",
    } <= paths


def test_bundle_cross_record_rules():
    data = starter_bundle()
    data["flow"]["steps"] = list(reversed(data["flow"]["steps"]))
    data["steps"][1]["flow_id"] = "flow_other"
    data["steps"][2]["step_id"] = "flow_weekly_review#9"
    with pytest.raises(BundleError) as err:
        parse_bundle(data)
    paths = {p.path for p in err.value.problems}
    assert {"flow.steps", "steps[1].flow_id", "steps[2].step_id"} <= paths


def test_bundle_text_errors_are_problems_not_crashes():
    with pytest.raises(BundleError):
        parse_bundle_text("flow: [unclosed")
    with pytest.raises(BundleError):
        parse_bundle_text("{", json_form=True)
    with pytest.raises(BundleError):
        parse_bundle_text("- just a list")


@pytest.mark.parametrize("make", [starter_bundle, automatable_bundle])
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_then_import_round_trips_every_field(make, fmt):
    original = parse_bundle(make())
    again = parse_bundle_text(dump_bundle(original, fmt), json_form=fmt == "json")
    assert again == original
    assert again.to_json() == original.to_json()
    assert dump_bundle(again, fmt) == dump_bundle(original, fmt)


def test_timestamps_stay_strings_through_yaml():
    data = starter_bundle()
    text = dump_bundle(parse_bundle(data)).replace("'2026-06-20T12:00:00Z'", "2026-06-20T12:00:00Z")
    assert parse_bundle_text(text).flow.updated == "2026-06-20T12:00:00Z"


# ------------------------------------------------------------------------ refusals


def test_every_code_has_a_status_and_a_fixed_message():
    spec = {
        "FLOW_RUN_WRITES_DISABLED": 403,
        "FLOW_AUTOMATABLE_EXECUTION_DISABLED": 403,
        "FLOW_EXECUTION_POLICY_FORBIDDEN": 403,
        "FLOW_STEP_NOT_AUTOMATABLE": 400,
        "FLOW_EXECUTION_CONSENT_REQUIRED": 403,
        "FLOW_EXECUTION_CONSENT_RUN_MISMATCH": 403,
        "FLOW_EXECUTION_COST_CAPPED": 403,
        "FLOW_EXECUTION_LANE_DENIED": 403,
        "FLOW_VERIFICATION_UNSATISFIED": 403,
        "FLOW_STEP_OUT_OF_ORDER": 409,
        "FLOW_RUN_NOT_IN_PROGRESS": 409,
        "FLOW_IMPORT_AUTOMATABLE_DENIED": 403,
        "unknown_run": 404,
        "unknown_flow": 404,
    }
    for name, status in spec.items():
        assert STATUS[name] == status
        assert FlowRefusal(name).to_json() == {  # type: ignore[arg-type]
            "ok": False,
            "code": name,
            "status": status,
            "error": MESSAGES[name],
        }
    assert set(STATUS) == set(MESSAGES)


def test_request_refusals_name_fields_never_values(ctx, clock):
    secret = "fcons_" + "s3cr3t" * 5
    refused = execute_automatable(
        ctx, {"run_id": "RUN!", "step_id": "x", "consent_id": secret, "dry_run": "maybe"}
    )
    text = str(refused.to_json())
    assert refused.code == "BAD_REQUEST"
    assert {p.path for p in refused.problems} == {"run_id", "step_id", "dry_run"}
    assert "RUN!" not in text and secret not in text and "maybe" not in text


def test_unknown_flow_and_version_pin(ctx, clock):
    assert code(start_run(ctx, {"flow_id": "flow_nope", "flow_version": "1.0.0"})) == (
        "unknown_flow"
    )
    assert code(start_run(ctx, {"flow_id": "flow_weekly_review", "flow_version": "9.9.9"})) == (
        "unknown_flow"
    )


def test_the_flow_engine_is_headless():
    """core.flow (and its CLI and MCP surfaces) never import textual."""
    import subprocess
    import sys
    from pathlib import Path

    code_ = (
        "import sys, core.flow, core.commands.flow, core.mcp.flow_tool; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code_],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    assert out.stdout.strip() == "False"


# ------------------------------------------------- the canonical records, exactly


def problems_of(data: dict) -> dict[str, str]:
    with pytest.raises(BundleError) as err:
        parse_bundle(data)
    return {p.path: p.message for p in err.value.problems}


def test_vault_mirror_path_is_kept_and_exported():
    data = starter_bundle()
    data["flow"]["vault_mirror_path"] = "meta/flows/weekly-review.md"
    b = parse_bundle(data)
    assert b.flow.vault_mirror_path == "meta/flows/weekly-review.md"
    assert b.to_json()["flow"]["vault_mirror_path"] == "meta/flows/weekly-review.md"
    assert list(b.to_json()["flow"])[-3:] == ["vault_mirror_path", "updated", "truncated"]


def test_ref_ids_are_opaque_spaces_allowed():
    data = starter_bundle()
    data["steps"][0]["skill_refs"] = [
        {"kind": "cli", "id": "knowtation list-notes --folder inbox --json"},
        {"kind": "cli", "id": "knowtation get-note <capture_path> --json"},
    ]
    data["steps"][0]["requires"] = [{"kind": "file", "id": "notes/My Inbox.md"}]
    b = parse_bundle(data)
    assert b.steps[0].skill_refs[0].id == "knowtation list-notes --folder inbox --json"
    assert b.to_json()["steps"][0]["requires"] == [{"kind": "file", "id": "notes/My Inbox.md"}]


@pytest.mark.parametrize("bad", ["", "   ", "a\nb", "tab\there", "x" * 1001])
def test_ref_ids_are_non_blank_single_line_and_bounded(bad):
    data = starter_bundle()
    data["steps"][0]["skill_refs"] = [{"kind": "cli", "id": bad}]
    assert "steps[0].skill_refs[0].id" in problems_of(data)


@pytest.mark.parametrize(
    ("where", "key"),
    [
        ("flow", "scope"),
        ("flow", "truncated"),
        ("flow", "summary"),
        ("flow", "updated"),
        ("step", "automatable"),
        ("step", "boundaries"),
        ("step", "owned_job"),
        ("step", "instruction"),
    ],
)
def test_required_fields_are_required_never_filled_in(where, key):
    data = starter_bundle()
    target = data["flow"] if where == "flow" else data["steps"][0]
    del target[key]
    path = f"flow.{key}" if where == "flow" else f"steps[0].{key}"
    assert path in problems_of(data)


def test_flow_input_fields_are_all_required():
    data = starter_bundle()
    data["flow"]["inputs"] = [{"name": "capture_path", "type": "string"}]
    assert "flow.inputs[0].required" in problems_of(data)


@pytest.mark.parametrize(
    "field", ["owned_job", "instruction", "trigger", "when_not_to_run", "output_shape"]
)
@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
def test_the_anatomy_rule_trims_so_blank_fields_fail_alike(field, blank):
    data = starter_bundle()
    data["steps"][1][field] = blank
    assert f"steps[1].{field}" in problems_of(data)


def test_blank_verification_description_fails_too():
    data = starter_bundle()
    data["steps"][0]["verification"]["description"] = "  "
    assert "steps[0].verification.description" in problems_of(data)


@pytest.mark.parametrize("field", ["when_not_to_run", "output_shape"])
def test_when_not_to_run_and_output_shape_are_strings(field):
    data = starter_bundle()
    data["steps"][0][field] = {"description": "Skip it.", "skip_reasons": ["not_applicable"]}
    assert f"steps[0].{field}" in problems_of(data)


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("flow", "truncated", "false"),
        ("flow", "truncated", 0),
        ("flow", "version", 1.0),
        ("step", "ordinal", "1"),
        ("step", "automatable", None),
    ],
)
def test_values_are_never_coerced(where, key, value):
    data = starter_bundle()
    target = data["flow"] if where == "flow" else data["steps"][0]
    target[key] = value
    path = f"flow.{key}" if where == "flow" else f"steps[0].{key}"
    assert path in problems_of(data)


@pytest.mark.parametrize(
    ("where", "key"), [("flow", "tags"), ("flow", "inputs"), ("flow", "vault_mirror_path")]
)
def test_optional_fields_are_absent_or_typed_never_null(where, key):
    data = starter_bundle()
    data["flow"][key] = None
    assert f"flow.{key}" in problems_of(data)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("flow.inputs.nope", "does not declare"),
        ("flow_weekly_review#9.outputs.summary", "does not come before"),
        ("flow_weekly_review#3.outputs.summary", "does not come before"),
        ("flow_weekly_review#1.outputs.nope", "does not declare"),
        ("flow_other#1.outputs.summary", "does not come before"),
        ("https://example.org/literal", "must be flow.inputs"),
        ("summary", "must be flow.inputs"),
    ],
)
def test_bad_from_references_are_refused_with_their_field_path(ref, message):
    data = starter_bundle()
    data["flow"]["inputs"] = [{"name": "week", "type": "string", "required": True}]
    data["steps"][0]["outputs"] = [{"name": "summary", "type": "text"}]
    data["steps"][2]["inputs"] = [
        {"name": "week", "from": "flow.inputs.week"},
        {"name": "x", "from": ref},
    ]
    problems = problems_of(data)
    assert list(problems) == ["steps[2].inputs[1].from"]
    assert message in problems["steps[2].inputs[1].from"]


def test_good_from_references_parse():
    data = starter_bundle()
    data["flow"]["inputs"] = [{"name": "week", "type": "string", "required": True}]
    data["steps"][0]["outputs"] = [{"name": "changes", "type": "text"}]
    data["steps"][1]["inputs"] = [
        {"name": "week", "from": "flow.inputs.week"},
        {"name": "changes", "from": "flow_weekly_review#1.outputs.changes"},
    ]
    assert parse_bundle(data).steps[1].inputs[1].from_ == "flow_weekly_review#1.outputs.changes"


def test_duplicate_input_names_are_refused():
    data = starter_bundle()
    data["flow"]["inputs"] = [
        {"name": "week", "type": "string", "required": True},
        {"name": "week", "type": "string", "required": False},
    ]
    assert "flow.inputs[1].name" in problems_of(data)


def test_the_codes_table_in_the_readme_is_the_engine_table():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Flow codes", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    table = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        table[cells[0].strip("`")] = int(cells[1])
    assert table == STATUS
    assert set(STATUS) == set(get_args(FlowCode))
    assert success_status("start") == 201 and success_status("advance") == 200


# ------------------------------------------- references resolve at execution, or fail


def test_an_unresolved_flow_input_fails_the_execution_in_band(ctx, clock, lane):
    # A required input is refused at start (`run_inputs`); a value lost after the start
    # still fails the step in band, never reaching a lane.
    refused = start_run(ctx, {"flow_id": "flow_lead_import", "flow_version": "1.0.0"})
    assert refused.code == "BAD_REQUEST"
    run = started(ctx, "flow_lead_import")
    rid = run["run_id"]
    ctx.store.connection().execute("DELETE FROM run_inputs")
    cid = consent_for(ctx, rid)
    step_id = "flow_lead_import#1"
    dry = execute_automatable(
        ctx, {"run_id": rid, "step_id": step_id, "consent_id": cid, "dry_run": True}
    )
    assert dry["inputs_resolved"] is False
    out = execute_automatable(ctx, {"run_id": rid, "step_id": step_id, "consent_id": cid})
    execution = out["execution"]
    assert execution["status"] == "failed" and execution["failure"] == "input_unresolved"
    assert execution["cost_units"] == 0 and execution["evidence_ref"] is None
    Execution.model_validate(execution)
    assert lane.calls == []  # the reference text never reached a lane
    row = ctx.store.connection().execute(
        "SELECT cost_consumed_units, cost_reserved_units FROM consents"
    )
    assert tuple(row.fetchone()) == (0, 0)
    assert out["run"]["step_states"][0]["status"] == "in_progress"


def test_a_flow_input_resolves_to_the_value_given_at_start(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]  # with sheet_url
    cid = consent_for(ctx, rid)
    out = execute_automatable(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
    )
    assert out["execution"]["status"] == "completed"
    assert dict(lane.calls[0].inputs) == {"sheet_url": SHEET_URL}


def chained_bundle() -> dict[str, Any]:
    """Step 2 (automatable) reads step 1's declared output."""
    f = "flow_chain"
    first = step(f, 1)
    first["outputs"] = [{"name": "report", "type": "text"}]
    refs = [{"kind": "skill_pack", "id": "gdrive.sheets.read"}]
    second = step(
        f,
        2,
        automatable="automatable",
        skill_refs=refs,
        inputs=[{"name": "report", "from": f"{f}#1.outputs.report"}],
    )
    return bundle(f, [first, second])


@pytest.mark.parametrize("finish", ["done", "skipped"])
def test_an_earlier_step_output_resolves_to_its_evidence_pointer(tmp_path, clock, lane, finish):
    f = "flow_chain"
    ctx = open_ctx(make_workspace(tmp_path / "ws", [chained_bundle()]), lane)
    try:
        rid = started(ctx, f)["run_id"]
        if finish == "done":
            record_evidence(
                ctx,
                {
                    "run_id": rid,
                    "step_id": f"{f}#1",
                    "evidence_ref": "artifact_report_1",
                    "pointer_kind": "artifact",
                },
            )
            advance_step(ctx, {"run_id": rid, "step_id": f"{f}#1", "to_status": "done"})
        else:
            advance_step(
                ctx,
                {
                    "run_id": rid,
                    "step_id": f"{f}#1",
                    "to_status": "skipped",
                    "skip_reason": "blocked_dependency",
                },
            )
        cid = consent_for(ctx, rid)
        out = execute_automatable(ctx, {"run_id": rid, "step_id": f"{f}#2", "consent_id": cid})
        if finish == "done":
            assert out["execution"]["status"] == "completed"
            assert dict(lane.calls[0].inputs) == {"report": "artifact_report_1"}
        else:  # a skipped step has no output: the execution fails in-band, no lane call
            assert out["execution"]["failure"] == "input_unresolved"
            assert lane.calls == []
    finally:
        ctx.close()


def test_advance_and_evidence_answer_the_peer_shape(ctx, clock):
    rid = started(ctx)["run_id"]
    s1 = "flow_weekly_review#1"
    ev = record_evidence(
        ctx, {"run_id": rid, "step_id": s1, "evidence_ref": "op_1", "pointer_kind": "artifact"}
    )
    adv = advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "done"})
    for result in (ev, adv):
        assert set(result) == {"schema", "run"}
        assert result["schema"] == "knowtation.flow_run/v0"
        FlowRun.model_validate(result["run"])
    sub = submit_review(ctx, {"run_id": rid, "intent": "Outcome"})
    assert set(sub) == {"schema", "run", "proposal_id", "proposal"}
    assert sub["schema"] == "knowtation.flow_run/v0"
    Proposal.model_validate(sub["proposal"])


@pytest.mark.parametrize("name", STARTER_FILES)
def test_every_starter_bundle_validates_as_it_is(name):
    text = (starter_dir() / name).read_text(encoding="utf-8")
    b = parse_bundle_text(text, json_form=True)
    assert b.to_json() == json.loads(text)
    assert all(isinstance(s.when_not_to_run, str) for s in b.steps)


def test_the_wal_switch_retries_a_locked_database_and_gives_up_on_other_errors():
    import sqlite3

    from core.flow import store as store_mod

    class Conn:
        def __init__(self, failures: list[str]) -> None:
            self.failures = failures
            self.calls = 0

        def execute(self, sql: str) -> Any:
            self.calls += 1
            if self.failures:
                raise sqlite3.OperationalError(self.failures.pop(0))

            class Row:
                def fetchone(self) -> tuple[str]:
                    return ("wal",)

            return Row()

    busy = Conn(["database is locked", "database is busy", "database is locked"])
    store_mod._enable_wal(busy)  # type: ignore[arg-type]
    assert busy.calls == 4
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        store_mod._enable_wal(Conn(["disk I/O error"]))  # type: ignore[arg-type]


def test_execution_status_is_the_contracts_enum_or_running():
    """The contract's final statuses, plus ``running`` for the execution a re-post finds
    still in flight (answered as it stands); nothing else validates."""
    from pydantic import ValidationError

    base = {
        "execution_id": "fexec_1",
        "step_id": "flow_x#1",
        "cost_units": 0,
        "model_lane": "local_default",
    }
    for status in ("running", "completed", "failed", "cost_capped", "consent_denied"):
        assert Execution.model_validate({**base, "status": status}).status == status
    for status in ("pending", "in_flight", "RUNNING", ""):
        with pytest.raises(ValidationError):
            Execution.model_validate({**base, "status": status})


def test_additive_codes_have_their_statuses():
    assert STATUS["FLOW_HUMAN_APPROVAL_REQUIRED"] == 403
    assert STATUS["unknown_consent"] == 404
    assert "human" in MESSAGES["FLOW_HUMAN_APPROVAL_REQUIRED"]
