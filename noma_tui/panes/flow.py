"""The flow-run frontier pane: runs, the selected run's steps, and keys to move the frontier.

The pane renders core records and never computes them: every key calls one handler of
`core.flow` (the same ones behind ``noma flow run ...`` and the MCP ``flow_run`` tool) and
shows what came back. A refusal is shown with its §8 code and HTTP status, exactly as the
engine returned it. Keys act on the step under the steps cursor, which jumps to the
frontier after every change, so the usual path is just pressing keys.

The app tells the pane which document is open (`open_document`), so "attach evidence"
can offer that document's latest transcript ``op_id`` or ``post_sha256`` as a pointer.
Automatable execution runs in a worker thread (the sandbox takes a moment); everything else
is a single SQLite transaction and runs inline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from core.flow import (
    FlowContext,
    FlowRefusal,
    FlowResult,
    advance_step,
    execute_automatable,
    list_flows,
    list_runs,
    mint_consent,
    record_evidence,
    start_run,
    submit_review,
)
from core.flow.enums import FINISHED_STEP, SKIP_REASONS
from core.flow.evidence import pointer_kind_for, transcript_offers
from core.flow.models import FlowBundle
from core.flow.runs import pinned_bundle
from core.workspace import Workspace

MARKS = {"done": "✓", "skipped": "↷", "in_progress": "●", "blocked": "■", "pending": "·"}
# A consent id that matches nothing: executing without one lets the engine answer with the
# code its precondition order gives (a gate, the step, or "consent required").
NO_CONSENT = "fcons_none"
TYPE_POINTER = "__type__"


# ----------------------------------------------------------------------------- dialogs


class ChoiceDialog(ModalScreen[str | None]):
    """Pick one option (Enter) or cancel (Escape)."""

    DEFAULT_CSS = """
    ChoiceDialog { align: center middle; }
    ChoiceDialog > Vertical {
        width: 64; height: auto; max-height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ChoiceDialog OptionList { height: auto; max-height: 16; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="flow.dialog.cancel")
    ]

    def __init__(self, title: str, options: list[tuple[str, str]], detail: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.detail = detail
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            if self.detail:
                yield Label(Text(self.detail, style="italic"))
            yield OptionList(*[Option(label, id=key) for key, label in self.options])

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class FormDialog(ModalScreen[dict[str, str] | None]):
    """A few labelled inputs; Enter moves to the next and submits on the last."""

    DEFAULT_CSS = """
    FormDialog { align: center middle; }
    FormDialog > Vertical {
        width: 64; height: auto; border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="flow.dialog.cancel")
    ]

    def __init__(self, title: str, fields: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields  # (name, label, default)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            for name, label, default in self.fields:
                yield Label(label)
                yield Input(value=default, id=f"field-{name}")

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    @on(Input.Submitted)
    def _next(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        index = inputs.index(event.input)
        if index + 1 < len(inputs):
            inputs[index + 1].focus()
            return
        self.dismiss(
            {name: self.query_one(f"#field-{name}", Input).value for name, _, _ in self.fields}
        )

    def action_cancel(self) -> None:
        self.dismiss(None)


# -------------------------------------------------------------------------------- pane


class FlowFrontierPane(Vertical):
    """Runs of the workspace's flows and the current frontier step."""

    DEFAULT_CSS = """
    FlowFrontierPane { height: 1fr; min-height: 8; }
    FlowFrontierPane #flow-header { height: auto; padding: 0 1; background: $boost; }
    FlowFrontierPane #flow-runs { height: auto; max-height: 8; }
    FlowFrontierPane #flow-run { height: 1; padding: 0 1; color: $text-muted; }
    FlowFrontierPane #flow-steps { height: 1fr; }
    FlowFrontierPane #flow-status { height: auto; min-height: 1; padding: 0 1; }
    FlowFrontierPane #flow-status.-refused { color: $error; text-style: bold; }
    FlowFrontierPane #flow-status.-ok { color: $success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "start_run", "Start", id="flow.start"),
        Binding("a", "advance", "Advance", id="flow.advance"),
        Binding("v", "approve", "Approve", id="flow.approve"),
        Binding("b", "block", "Block", id="flow.block"),
        Binding("s", "skip", "Skip", id="flow.skip"),
        Binding("e", "evidence", "Evidence", id="flow.evidence"),
        Binding("c", "consent", "Consent", id="flow.consent"),
        Binding("X", "dry_run", "Dry run", id="flow.dry_run"),
        Binding("x", "execute", "Execute", id="flow.execute"),
        Binding("r", "submit_review", "Review", id="flow.submit_review"),
        Binding("f5", "reload", "Reload", id="flow.reload", show=False),
    ]

    class Refused(Message):
        """The engine said no; `refusal` carries the §8 code and status."""

        def __init__(self, pane: FlowFrontierPane, refusal: FlowRefusal) -> None:
            super().__init__()
            self.pane = pane
            self.refusal = refusal

        @property
        def control(self) -> FlowFrontierPane:
            return self.pane

    class RunChanged(Message):
        """A run record changed (started, advanced, executed, ...)."""

        def __init__(self, pane: FlowFrontierPane, run: dict[str, Any]) -> None:
            super().__init__()
            self.pane = pane
            self.run = run

        @property
        def control(self) -> FlowFrontierPane:
            return self.pane

    class Executed(Message):
        """Posted from the execution worker with the handler's result."""

        def __init__(self, result: FlowResult, dry_run: bool) -> None:
            super().__init__()
            self.result = result
            self.dry_run = dry_run

    def __init__(self, workspace: Workspace, *, id: str | None = "flow-pane") -> None:
        super().__init__(id=id)
        self.workspace = workspace
        self.ctx: FlowContext | None = None
        self.open_document: Path | None = None
        self.runs: list[dict[str, Any]] = []
        self.run: dict[str, Any] | None = None
        self.bundle: FlowBundle | None = None
        self.consents: dict[str, str] = {}
        self.last_status = ""

    # ---------------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static("", id="flow-header")
        runs: DataTable[Any] = DataTable(id="flow-runs", cursor_type="row", zebra_stripes=True)
        yield runs
        yield Static("", id="flow-run")
        steps: DataTable[Any] = DataTable(id="flow-steps", cursor_type="row")
        yield steps
        yield Static("", id="flow-status")

    def on_mount(self) -> None:
        self.ctx = FlowContext.open(self.workspace)
        runs = self.query_one("#flow-runs", DataTable)
        runs.add_columns("Flow", "Status", "Done", "Started")
        steps = self.query_one("#flow-steps", DataTable)
        steps.add_columns(" ", "#", "Step", "Status", "Proof", "Mode")
        gates = self.ctx.posture.gates
        policy = self.ctx.posture.policy
        header = (
            f"writes {'ON' if gates.run_writes_enabled else 'off'} · automatable "
            f"{'ON' if gates.automatable_execution_enabled else 'off'} · cap "
            f"{policy.cost_cap_units} · lanes {','.join(policy.allowed_lanes) or 'none'}"
        )
        if self.ctx.posture.problems:
            header += " · config problem: failing closed"
        self.query_one("#flow-header", Static).update(header)
        self.reload()
        if not self.runs:
            self.say("No runs yet: press n to start one.")

    def on_unmount(self) -> None:
        if self.ctx is not None:
            self.ctx.close()
            self.ctx = None

    def set_open_document(self, path: Path | None) -> None:
        """Called by the app when the focused document changes (for evidence offers)."""
        self.open_document = path

    # ---------------------------------------------------------------------- render

    def reload(self, select: str | None = None) -> None:
        assert self.ctx is not None
        result = list_runs(self.ctx, {"limit": 200})
        self.runs = result["runs"] if isinstance(result, dict) else []
        table = self.query_one("#flow-runs", DataTable)
        keep = select or (self.run["run_id"] if self.run else None)
        table.clear()
        for run in self.runs:
            states = run["step_states"]
            finished = sum(s["status"] in FINISHED_STEP for s in states)
            table.add_row(
                f"{run['flow_id'].removeprefix('flow_')}@{run['flow_version']}",
                run["status"],
                f"{finished}/{len(states)}",
                run["started"][5:16].replace("T", " "),
                key=run["run_id"],
            )
        ids = [r["run_id"] for r in self.runs]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
            self.show(self.runs[ids.index(keep)])
        elif self.runs:
            table.move_cursor(row=0)
            self.show(self.runs[0])
        else:
            self.show(None)

    def show(self, run: dict[str, Any] | None) -> None:
        """Fill the steps table for ``run`` and put the cursor on its frontier."""
        assert self.ctx is not None
        if run is None or self.run is None or run["run_id"] != self.run["run_id"]:
            self.bundle = pinned_bundle(self.ctx, run["run_id"]) if run else None
        self.run = run
        table = self.query_one("#flow-steps", DataTable)
        table.clear()
        line = self.query_one("#flow-run", Static)
        if run is None or self.bundle is None:
            line.update("")
            return
        held = " · consent held" if run["run_id"] in self.consents else ""
        line.update(f"{run['run_id']} · {run['etag']}{held}")
        states = run["step_states"]
        frontier = next((i for i, s in enumerate(states) if s["status"] not in FINISHED_STEP), None)
        for index, (state, step) in enumerate(zip(states, self.bundle.steps, strict=True)):
            here = index == frontier
            style = "bold reverse" if here else ""
            proof = "verified" if state["verified"] else ""
            if state.get("evidence_ref") and not state["verified"]:
                proof = "evidence"
            mode = f"{step.automatable} · {step.verification.kind}"
            table.add_row(
                Text("▶" if here else MARKS.get(state["status"], "?"), style=style),
                Text(str(step.ordinal), style=style),
                Text(step.owned_job, style=style),
                Text(state["status"], style=style),
                proof,
                mode,
                key=state["step_id"],
            )
        if frontier is not None:
            table.move_cursor(row=frontier)

    def say(self, text: str, *, refused: bool = False, ok: bool = False) -> None:
        self.last_status = text
        status = self.query_one("#flow-status", Static)
        status.update(text)
        status.set_class(refused, "-refused")
        status.set_class(ok, "-ok")

    def apply(self, result: FlowResult, done: str) -> bool:
        """Show a handler's result: the refusal's code, or ``done`` and the updated run."""
        if isinstance(result, FlowRefusal):
            self.say(f"✗ {result.code} ({result.status}) {result.message}", refused=True)
            self.post_message(self.Refused(self, result))
            return False
        run = result.get("run")
        self.say(done, ok=True)
        if isinstance(run, dict):
            self.reload(select=run["run_id"])
            self.post_message(self.RunChanged(self, run))
        return True

    @on(DataTable.RowHighlighted, "#flow-runs")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        run = next((r for r in self.runs if r["run_id"] == key), None)
        if run is not None and (self.run is None or run["run_id"] != self.run["run_id"]):
            self.show(run)

    # --------------------------------------------------------------------- targets

    def _target(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The selected run and the step under the steps cursor (the frontier by default)."""
        if self.run is None or self.bundle is None:
            self.say("No run selected: press n to start one.")
            return None
        table = self.query_one("#flow-steps", DataTable)
        row = table.cursor_row if table.row_count else 0
        states = self.run["step_states"]
        return self.run, states[min(max(row, 0), len(states) - 1)]

    def _advance(self, to_status: str, **extra: Any) -> None:
        target = self._target()
        if target is None or self.ctx is None:
            return
        run, state = target
        request = {"run_id": run["run_id"], "step_id": state["step_id"], "to_status": to_status}
        result = advance_step(self.ctx, {**request, **extra})
        self.apply(result, f"{state['step_id']} → {to_status}")

    # --------------------------------------------------------------------- actions

    def action_reload(self) -> None:
        self.reload()

    def action_start_run(self) -> None:
        assert self.ctx is not None
        flows = list_flows(self.ctx)
        if isinstance(flows, FlowRefusal) or not flows["flows"]:
            self.say("No flows in this workspace's flows/ folder.")
            return
        options = [
            (f"{f['flow_id']}@{f['version']}", f"{f['title']}  ({f['flow_id']}@{f['version']})")
            for f in flows["flows"]
        ]

        def chosen(key: str | None) -> None:
            if key is None or self.ctx is None:
                return
            flow_id, _, version = key.partition("@")
            result = start_run(self.ctx, {"flow_id": flow_id, "flow_version": version})
            if isinstance(result, dict):
                self.apply(result, f"Started {result['run']['run_id']} on {key}")
            else:
                self.apply(result, "")

        self.app.push_screen(ChoiceDialog("Start a run of which flow?", options), chosen)

    def action_advance(self) -> None:
        target = self._target()
        if target is None:
            return
        status = target[1]["status"]
        self._advance("done" if status == "in_progress" else "in_progress")

    def action_approve(self) -> None:
        self._advance("done", approve=True)

    def action_block(self) -> None:
        target = self._target()
        if target is None:
            return
        self._advance("in_progress" if target[1]["status"] == "blocked" else "blocked")

    def action_skip(self) -> None:
        target = self._target()
        if target is None or self.bundle is None:
            return
        step = self.bundle.step(target[1]["step_id"])
        declared = step.skip_reasons if step else ()
        options = [
            (reason, f"{reason}{'  (declared by the step)' if reason in declared else ''}")
            for reason in SKIP_REASONS
        ]

        def chosen(reason: str | None) -> None:
            if reason is not None:
                self._advance("skipped", skip_reason=reason)

        when = ""
        if step is not None:
            rule = step.when_not_to_run
            when = "When not to run: " + (rule if isinstance(rule, str) else rule.description)
        dialog = ChoiceDialog(f"Skip {target[1]['step_id']} because…", options, when)
        self.app.push_screen(dialog, chosen)

    def action_evidence(self) -> None:
        target = self._target()
        if target is None:
            return
        run, state = target
        offers = transcript_offers(self.open_document)
        options = [(f"{o.pointer_kind}:{o.evidence_ref}", o.label) for o in offers]
        options.append((TYPE_POINTER, "Type a pointer (id or sha256)…"))

        def record(kind: str, ref: str) -> None:
            if self.ctx is None:
                return
            result = record_evidence(
                self.ctx,
                {
                    "run_id": run["run_id"],
                    "step_id": state["step_id"],
                    "evidence_ref": ref,
                    "pointer_kind": kind,
                },
            )
            self.apply(result, f"Evidence ({kind}) attached to {state['step_id']}")

        def typed(values: dict[str, str] | None) -> None:
            if values and values["pointer"].strip():
                ref = values["pointer"].strip()
                record(pointer_kind_for(ref), ref)

        def chosen(key: str | None) -> None:
            if key is None:
                return
            if key == TYPE_POINTER:
                form = FormDialog("Evidence pointer", [("pointer", "Pointer", "")])
                self.app.push_screen(form, typed)
                return
            kind, _, ref = key.partition(":")
            record(kind, ref)

        self.app.push_screen(ChoiceDialog("Attach which evidence?", options), chosen)

    def action_consent(self) -> None:
        if self.run is None or self.ctx is None:
            self.say("No run selected: press n to start one.")
            return
        run_id = self.run["run_id"]
        policy = self.ctx.posture.policy
        form = FormDialog(
            f"Consent to automatable execution on {run_id}",
            [
                ("cap", "Cost cap (units)", str(policy.cost_cap_units or 1)),
                ("ttl", "Valid for (seconds)", "3600"),
            ],
        )

        def minted(values: dict[str, str] | None) -> None:
            if values is None or self.ctx is None:
                return
            request: dict[str, Any] = {
                "run_id": run_id,
                "allowed_lanes": list(self.ctx.posture.policy.allowed_lanes) or ["local_default"],
                "cost_cap_units": _int(values["cap"]),
                "ttl_seconds": _int(values["ttl"]),
            }
            result = mint_consent(self.ctx, request)
            if isinstance(result, FlowRefusal):
                self.apply(result, "")
                return
            consent = result["consent"]
            self.consents[run_id] = consent["consent_id"]
            self.show(self.run)
            self.say(
                f"Consent held for {run_id}: cap {consent['cost_cap_units']} units, "
                f"lanes {','.join(consent['allowed_lanes'])}, until {consent['expires_at']}",
                ok=True,
            )

        self.app.push_screen(form, minted)

    def action_dry_run(self) -> None:
        self._execute(dry_run=True)

    def action_execute(self) -> None:
        self._execute(dry_run=False)

    def _execute(self, *, dry_run: bool) -> None:
        target = self._target()
        if target is None:
            return
        run, state = target
        request = {
            "run_id": run["run_id"],
            "step_id": state["step_id"],
            "consent_id": self.consents.get(run["run_id"], NO_CONSENT),
            "dry_run": dry_run,
        }
        self.say(("Checking gates for " if dry_run else "Executing ") + state["step_id"] + " …")
        self._execute_worker(request, dry_run)

    @work(thread=True, exclusive=True, group="flow-exec", exit_on_error=False)
    def _execute_worker(self, request: dict[str, Any], dry_run: bool) -> None:
        ctx = self.ctx
        if ctx is None:
            return
        try:
            result = execute_automatable(ctx, request)
        finally:
            ctx.store.release()
        self.post_message(self.Executed(result, dry_run))

    def on_flow_frontier_pane_executed(self, message: FlowFrontierPane.Executed) -> None:
        message.stop()
        result = message.result
        if isinstance(result, FlowRefusal):
            self.apply(result, "")
        elif message.dry_run:
            self.say(
                f"Dry run: every gate passes; lane {result['model_lane']}, "
                f"{result['reservable_units']} units reservable",
                ok=True,
            )
        else:
            execution = result["execution"]
            self.apply(
                result,
                f"Execution {execution['status']}: {execution['cost_units']} units on "
                f"{execution['model_lane']}",
            )

    def action_submit_review(self) -> None:
        if self.run is None or self.ctx is None:
            self.say("No run selected: press n to start one.")
            return
        run_id = self.run["run_id"]
        form = FormDialog("Submit the run's outcome to review", [("intent", "Intent", "")])

        def submitted(values: dict[str, str] | None) -> None:
            if values is None or self.ctx is None:
                return
            result = submit_review(self.ctx, {"run_id": run_id, "intent": values["intent"]})
            if isinstance(result, FlowRefusal):
                self.apply(result, "")
            else:
                proposal = result["proposal"]
                self.say(f"Proposal {proposal['proposal_id']} is pending review", ok=True)

        self.app.push_screen(form, submitted)


def _int(text: str) -> int | str:
    """A number if it is one; otherwise the text, for the engine to refuse with its code."""
    try:
        return int(text.strip())
    except ValueError:
        return text
