"""The flow runs pane: runs, the selected run's steps, a detail view of the step under the
cursor, and keys to move the frontier.

The pane renders core records and never computes them: every key calls one handler of
`core.flow` (the same ones behind ``noma flow run ...`` and the MCP ``flow_run`` tool) and
shows what came back, read as typed records (`FlowRun`, `StepState`). A refusal is shown in
one line with its §8 code and HTTP status; ``o`` opens the whole message.

Every handler call runs in a thread worker and posts `FlowPane.Done` back (a CLI holding the
store's write lock must never freeze the UI); keys wait while a call is in flight. Its keys
live in the one registry (`noma_tui.keys.FLOW_ACTIONS`, section "Flow runs" in F1 and the
palette); its dialogs are the app's `PickerScreen` and `InputFormScreen`, and every form
validates its fields before the handler is called. The skip picker offers the three
canonical reasons (policy, not_applicable, blocked_dependency), with the step's
``when_not_to_run`` prose as the hint. ``P`` reviews pending proposals and ``C`` lists (and
revokes) the run's consents (`noma_tui.flow_review`). Starting a run asks for the flow's
declared inputs. The header counts ``flows/`` problems; the first is said in the status line.

With ``[hub] url`` configured the same calls go to a remote hub (`core.flow.backend`); a
refused listing (a hub down, a token refused) is a status line, not a crash.

The app tells the pane which document is open (`set_open_document`), so "attach evidence"
can offer that document's latest transcript ``op_id`` or ``post_sha256`` as a pointer. The
local store is opened lazily (`FlowContext.open(lazy=True)`): nothing is written until a
run is.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from core.flow import FlowRefusal, FlowResult
from core.flow.backend import FlowBackend, run_executions, start_fields
from core.flow.consent import consent_key, consent_ref
from core.flow.definitions import problem_lines
from core.flow.enums import FINISHED_STEP, SKIP_REASON_LABELS
from core.flow.evidence import EvidenceOffer, pointer_kind_for, transcript_offers
from core.flow.models import FlowBundle, FlowInput, FlowStep
from core.flow.records import FlowRun, StepState
from core.flow.run_inputs import input_problems, problems_text
from core.trust import restrictions
from core.workspace import Workspace

# The flow backend, local (a lazy store: `core.flow.lazy_store`) or on a remote hub
# (`[hub] url`): see noma_tui/flow_hub.py.
from ..flow_hub import open_flow_backend
from ..flow_review import manage_consents, review_proposals
from ..keys import BY_ID, FLOW_ACTIONS, display_key
from ..screens.form import Field, InputFormScreen
from ..screens.picker import PickerScreen
from ..typeahead import Until, gate_of
from ..visible import plain
from .scrollbars import PaneTable

MARKS = {"done": "✓", "skipped": "↷", "in_progress": "●", "blocked": "■", "pending": "·"}
# A consent id that matches nothing: executing without one lets the engine answer with the
# code its precondition order gives (a gate, the step, or "consent required").
NO_CONSENT = "fcons_none"
TYPE_POINTER = "__type__"
LOADING = "Loading runs…"
POINTER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:#/@+-]{0,199}$")  # records.Pointer
MAX_INTENT = 2000  # records.Proposal.intent
MAX_TTL_SECONDS = 7 * 24 * 3600


def active_consents(backend: FlowBackend, held: dict[str, str]) -> dict[str, str]:
    """Of ``held`` (run id -> the consent id this pane minted), the ones the store still
    lists as active. A hub does not list consents (they live on its machine): kept."""
    out: dict[str, str] = {}
    for run_id, consent_id in held.items():
        if not backend.serves("consents"):
            out[run_id] = consent_id
            continue
        result = backend.call("consents", {"run_id": run_id})
        if not isinstance(result, dict):
            continue  # the run is gone or not visible: nothing is held
        ref = consent_ref(consent_key(consent_id))
        listed = result.get("consents") or []
        if any(c.get("consent_ref") == ref and c.get("state") == "active" for c in listed):
            out[run_id] = consent_id
    return out


def _typed_run(record: object) -> FlowRun | None:
    try:
        return FlowRun.model_validate(record)
    except ValidationError:
        return None


def declared_skip_reasons(step: FlowStep | None) -> tuple[str, ...]:
    """The reasons any step may be skipped for: the three canonical ones (steps declare none
    of their own; ``when_not_to_run`` is prose for the person deciding)."""
    return tuple(SKIP_REASON_LABELS) if step is not None else ()


def when_not_to_run(step: FlowStep | None) -> str:
    if step is None:
        return ""
    return str(step.when_not_to_run or "")


CONFIG = "noma-workbench.toml"


def _key(binding_id: str) -> str:
    return display_key(BY_ID[binding_id].key)


def fix_hint(code: str) -> str:
    """What fixes a refusal, naming the key or the setting (and where it lives)."""
    hints = {
        "FLOW_RUN_WRITES_DISABLED": f"set [gates] run_writes_enabled = true in {CONFIG} "
        f"(the folder must be trusted: {_key('app.trust')}), then restart the workbench",
        "FLOW_AUTOMATABLE_EXECUTION_DISABLED": "set [gates] automatable_execution_enabled "
        f"= true in {CONFIG} (trusted folder: {_key('app.trust')}), then restart",
        "FLOW_EXECUTION_POLICY_FORBIDDEN": f"[policy] automatable_forbidden in {CONFIG} "
        "forbids it; do the step by hand",
        "FLOW_EXECUTION_CONSENT_REQUIRED": f"press {_key('flow.consent')} to consent first",
        "FLOW_EXECUTION_CONSENT_RUN_MISMATCH": f"press {_key('flow.consent')} to consent "
        "for this run",
        "FLOW_EXECUTION_COST_CAPPED": f"press {_key('flow.consent')} for a new consent "
        f"(its cap is within [policy] cost_cap_units in {CONFIG})",
        "FLOW_EXECUTION_LANE_DENIED": f"[policy] allowed_lanes in {CONFIG} names the lanes",
        "FLOW_HUMAN_APPROVAL_REQUIRED": f"press {_key('flow.approve')} to approve the step "
        "as its reviewer",
        "FLOW_VERIFICATION_UNSATISFIED": f"press {_key('flow.evidence')} to attach evidence, "
        f"then {_key('flow.approve')} to approve",
        "FLOW_STEP_OUT_OF_ORDER": f"finish the step marked ▶ first ({_key('flow.advance')} "
        f"advance, {_key('flow.skip')} skip)",
        "FLOW_STEP_NOT_AUTOMATABLE": f"a human step: {_key('flow.advance')} advances it, "
        f"{_key('flow.approve')} approves it",
        "FLOW_RUN_NOT_IN_PROGRESS": f"the run is not in progress ({_key('flow.proposals')} "
        "shows proposals waiting for review)",
        "FLOW_RUN_CONFLICT": f"someone else changed the run: {_key('flow.reload')} re-reads "
        "it, then try again",
        "FLOW_VERSION_CONFLICT": f"{_key('flow.reload')} re-reads the run, then try again",
    }
    return hints.get(code, "")


def refusal_line(refusal: FlowRefusal) -> str:
    hint = fix_hint(refusal.code)
    line = f"✗ {refusal.code} ({refusal.status}) {refusal.message}"
    return f"{line} → {hint}" if hint else line


def refusal_detail(refusal: FlowRefusal) -> str:
    lines = [refusal_line(refusal)]
    for problem in refusal.problems:
        lines.append(f"  · {problem.path}: {problem.message}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- form checks


def check_consent(cap_limit: int | None) -> Callable[[dict[str, str]], str | None]:
    def check(values: dict[str, str]) -> str | None:
        cap, ttl = values["cap"].strip(), values["ttl"].strip()
        if not cap.isdigit():
            return "The cost cap is a whole number of units (0 or more)."
        if cap_limit is not None and int(cap) > cap_limit:
            return f"The workspace policy allows at most {cap_limit} units."
        if not ttl.isdigit() or int(ttl) == 0:
            return "The time limit is a whole number of seconds, more than 0."
        if int(ttl) > MAX_TTL_SECONDS:
            return f"At most {MAX_TTL_SECONDS} seconds (7 days)."
        return None

    return check


def check_intent(values: dict[str, str]) -> str | None:
    intent = values["intent"].strip()
    if not intent:
        return "Say what the run produced (the review intent cannot be empty)."
    if len(intent) > MAX_INTENT:
        return f"At most {MAX_INTENT} characters ({len(intent)} typed)."
    return None


def check_pointer(values: dict[str, str]) -> str | None:
    ref = values["pointer"].strip()
    if not ref:
        return "Type a pointer: a transcript op_id, a sha256, a prop_ id or an artifact id."
    if not POINTER.match(ref):
        return "A pointer is 1–200 of A-Z a-z 0-9 _ . : # / @ + - (starting with a letter/digit)."
    return None


# ------------------------------------------------------------------------------ pane


GATE_LABELS = {"run_writes_enabled": "writes", "automatable_execution_enabled": "automatable"}


class FlowFrontierPane(Vertical):
    """Runs of the workspace's flows and the current frontier step."""

    DEFAULT_CSS = """
    FlowFrontierPane { height: 1fr; min-height: 8; }
    FlowFrontierPane #flow-header { height: 1; padding: 0 1; background: $boost;
        text-overflow: ellipsis; text-wrap: nowrap; }
    FlowFrontierPane .flow-why { height: 1; padding: 0 1; color: $text-muted;
        text-overflow: ellipsis; text-wrap: nowrap; display: none; }
    FlowFrontierPane .flow-why.-shown { display: block; }
    FlowFrontierPane #flow-runs { height: auto; max-height: 8; }
    FlowFrontierPane #flow-run { height: 1; padding: 0 1; color: $text-muted;
        text-overflow: ellipsis; text-wrap: nowrap; }
    FlowFrontierPane #flow-steps { height: 1fr; min-height: 3; }
    FlowFrontierPane #flow-detail { height: auto; max-height: 7; padding: 0 1;
        border-top: hkey $border-blurred; }
    FlowFrontierPane #flow-status { height: 1; padding: 0 1;
        text-overflow: ellipsis; text-wrap: nowrap; }
    FlowFrontierPane #flow-status.-refused { color: $error; text-style: bold; }
    FlowFrontierPane #flow-status.-ok { color: $success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in FLOW_ACTIONS]
    ALLOW_MAXIMIZE = True  # z zooms the whole pane, not one of its tables

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

        def __init__(self, pane: FlowFrontierPane, run: FlowRun) -> None:
            super().__init__()
            self.pane = pane
            self.run = run

        @property
        def control(self) -> FlowFrontierPane:
            return self.pane

    class Done(Message):
        """Posted from a worker thread: ``then(result)`` runs on the UI thread."""

        def __init__(self, then: Callable[[Any], object], result: Any, write: bool = False) -> None:
            super().__init__()
            self.then = then
            self.result = result
            self.write = write  # a run write: the consent badge is read again after it

    def __init__(self, workspace: Workspace, *, id: str | None = "flow-pane") -> None:
        super().__init__(id=id)
        self.workspace = workspace
        self.backend: FlowBackend | None = None  # lazy: nothing on disk until a write
        self.open_document: Path | None = None
        self.runs: list[FlowRun] = []
        self.run: FlowRun | None = None
        self.bundle: FlowBundle | None = None
        self.bundles: dict[str, FlowBundle | None] = {}
        # the executions of live runs (an interrupted one is shown on its step)
        self.executions: dict[str, list[dict[str, Any]]] = {}
        self.consents: dict[str, str] = {}
        self.last_status = ""
        self.last_detail = ""
        self.header_text = ""
        self.busy = 0  # handler calls in flight
        self._holding: Until | None = None  # the keys wait for a key-started call

    # ---------------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static("", id="flow-header")
        for name in GATE_LABELS:  # which gate is on and why, one line each ([gates.why])
            yield Static("", id=f"flow-why-{GATE_LABELS[name]}", classes="flow-why")
        runs = PaneTable(id="flow-runs", cursor_type="row", zebra_stripes=True)
        yield runs
        yield Static("", id="flow-run")
        steps = PaneTable(id="flow-steps", cursor_type="row")
        yield steps
        yield Static("", id="flow-detail")
        yield Static("", id="flow-status")

    def on_mount(self) -> None:
        runs = self.query_one("#flow-runs", DataTable)
        runs.add_columns("Flow", "Status", "Done", "Started")
        steps = self.query_one("#flow-steps", DataTable)
        steps.add_columns(" ", "#", "Step", "Status", "Proof")
        self._open_context()

    def reopen(self, workspace: Workspace) -> None:
        """Open the workspace again (its trust changed): its settings as they apply now."""
        old, self.backend = self.backend, None
        if old is not None:
            old.close()
        self.workspace = workspace
        self._open_context()

    def _open_context(self) -> None:
        self.backend = open_flow_backend(self.workspace)
        gates = self.backend.posture.gates
        policy = self.backend.posture.policy
        header = (
            f"writes {'ON' if gates.run_writes_enabled else 'off'} · automatable "
            f"{'ON' if gates.automatable_execution_enabled else 'off'} · cap "
            f"{policy.cost_cap_units} · lanes {','.join(policy.allowed_lanes) or 'none'}"
        )
        if self.backend.posture.problems:
            header += " · config problem: failing closed"
        if not self.workspace.trusted and restrictions(self.workspace.root, self.workspace.config):
            header += " · restricted: untrusted folder (T)"
        self.header_text = header
        self.query_one("#flow-header", Static).update(Text(plain(header)))
        for name, label in GATE_LABELS.items():
            reason = self.backend.posture.why.get(name)
            line = self.query_one(f"#flow-why-{label}", Static)
            line.update(Text(plain(f"{label} ON: {reason}" if reason else "")))
            line.set_class(reason is not None, "-shown")
        self.say(LOADING)

        def listed(listing: FlowResult) -> None:
            self._listed_on_mount(listing)
            self.reload(first=True, holds=False)

        # One call at a time: then the runs. Nobody pressed a key for these: keys pass.
        self.background(lambda backend: backend.call("flows"), listed, holds=False)

    def _listed_on_mount(self, listing: FlowResult) -> None:
        """`flows/` problems in the header (the first one said), or a refused listing."""
        if isinstance(listing, FlowRefusal):  # e.g. a remote hub that is down or refuses us
            detail = "; ".join(f"{p.path}: {p.message}" for p in listing.problems)
            line = f"✗ {listing.code} ({listing.status}) {detail}"
            self.say(line, refused=True, detail=refusal_detail(listing))
            return
        problems = problem_lines(listing)
        if not problems:
            return
        self.header_text += f" · {len(problems)} flows/ problem(s), see noma flow list"
        self.query_one("#flow-header", Static).update(Text(plain(self.header_text)))
        self.say(f"flows/ problem: {problems[0]}", detail="\n".join(problems))

    def on_unmount(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None

    def set_open_document(self, path: Path | None) -> None:
        """Called by the app when the focused document changes (for evidence offers)."""
        self.open_document = path

    def focus_target(self) -> DataTable[Any]:
        """What key 5 focuses: the steps table."""
        return self.query_one("#flow-steps", DataTable)

    def focus_steps(self) -> None:
        self.screen.set_focus(self.focus_target())

    def action_toggle_runs(self) -> None:
        """The runs list and the steps of the selected run, without shift+Tab."""
        runs = self.query_one("#flow-runs", DataTable)
        self.screen.set_focus(self.focus_target() if self.screen.focused is runs else runs)

    # -------------------------------------------------------------------- workers

    def background(
        self,
        fn: Callable[[FlowBackend], Any],
        then: Callable[[Any], object],
        *,
        write: bool = False,
        holds: bool = True,
    ) -> None:
        """Run ``fn(backend)`` in a thread; ``then(result)`` back on the UI thread. ``write``
        marks a run write: a lazy local store is made real first if the gates allow it.

        ``holds``: a key asked for this, so the keys typed after it wait until the pane is
        idle again (a dialog the answer opens takes them over): ``n`` then Enter picks from
        the flows it lists, ``a`` then ``a`` advances the step the first one left."""
        if self.backend is None:
            return
        self.busy += 1
        if holds:
            self._hold_keys()
        self._worker(self.backend, fn, then, write)

    def _hold_keys(self) -> None:
        gate = gate_of(self)
        if gate is None:
            return
        if self._holding is None:
            self._holding = Until(lambda: self.is_attached)
        gate.hold(self._holding)  # again, when a dialog in between took the hold over

    def _release_keys(self) -> None:
        """Idle again: the keys held since the pane's last key-started call go on (no-op
        when a dialog the answer opened holds them now)."""
        gate, holding = gate_of(self), self._holding
        self._holding = None
        if gate is not None and holding is not None:
            gate.release(holding)

    @work(thread=True, group="flow-call", exit_on_error=False)
    def _worker(
        self,
        backend: FlowBackend,
        fn: Callable[[FlowBackend], Any],
        then: Callable[[Any], object],
        write: bool,
    ) -> None:
        try:
            # One call at a time (`busy`), so a lazy store turning real here races nothing.
            backend = self.backend = backend.settled(write=write)
            result = fn(backend)
        except Exception as exc:  # reported like a refusal; the pane stays usable
            result = exc
        finally:
            with contextlib.suppress(Exception):  # release is best effort
                backend.release()
        self.post_message(self.Done(then, result, write))

    def on_flow_frontier_pane_done(self, message: FlowFrontierPane.Done) -> None:
        message.stop()
        self.busy = max(0, self.busy - 1)
        try:
            if isinstance(message.result, Exception):
                exc = message.result
                self.say(f"✗ {type(exc).__name__}: {exc}", refused=True, detail=repr(exc))
                return
            message.then(message.result)
            if message.write:
                self.recheck_consents()  # after ``then`` (a mint adds one)
        finally:
            if not self.busy:
                self._release_keys()

    def ready(self) -> bool:
        """False (after saying so) while a call is in flight: keys never race a write."""
        if self.busy:
            self.say("Still working on the last request…")
            return False
        return self.backend is not None

    # ---------------------------------------------------------------------- render

    def reload(self, select: str | None = None, *, first: bool = False, holds: bool = True) -> None:
        keep = select or (self.run.run_id if self.run else None)

        Loaded = tuple[
            list[FlowRun],
            dict[str, FlowBundle | None],
            dict[str, list[dict[str, Any]]],
            dict[str, str],
        ]

        held = dict(self.consents)

        def load(backend: FlowBackend) -> Loaded:
            result = backend.call("list", {"limit": 200})
            records = result["runs"] if isinstance(result, dict) else []
            runs = [r for r in (_typed_run(x) for x in records) if r is not None]
            bundles = {r.run_id: backend.pinned_bundle(r.run_id) for r in runs}
            live = [r.run_id for r in runs if r.status in ("in_progress", "blocked")]
            active = active_consents(backend, held)
            return runs, bundles, {rid: run_executions(backend, rid) for rid in live}, active

        def loaded(result: Loaded) -> None:
            self.runs, self.bundles, self.executions, active = result
            self._keep_active(held, active)
            self._fill_runs(keep)
            if first and self.last_status == LOADING:
                gates = self.gates_off()
                if gates:
                    self.say(gates[0], detail="\n".join(gates))
                else:
                    self.say("No runs yet: press n to start one." if not self.runs else "")

        self.background(load, loaded, holds=holds)

    def gates_off(self) -> list[str]:
        """What the header's "off" means: each gate that is off, the setting that turns it
        on and where it lives (empty when both are on)."""
        if self.backend is None:
            return []
        gates = self.backend.posture.gates
        trust = _key("app.trust")
        out = []
        if not gates.run_writes_enabled:
            out.append(
                f"Writes off: [gates] run_writes_enabled = true in {CONFIG} turns them on "
                f"(a trusted folder: {trust}); {_key('flow.message')} shows this in full"
            )
        if not gates.automatable_execution_enabled:
            out.append(
                "Automatable off: [gates] automatable_execution_enabled = true in "
                f"{CONFIG} allows sandboxed steps (a trusted folder: {trust})"
            )
        return out

    def _keep_active(self, asked: dict[str, str], active: dict[str, str]) -> None:
        """Drop the held consents the store no longer counts (revoked, expired); one
        minted since the question was asked stays."""
        for run_id, consent_id in asked.items():
            if active.get(run_id) != consent_id and self.consents.get(run_id) == consent_id:
                del self.consents[run_id]

    def recheck_consents(self) -> None:
        """Read the held consents' state again (after every write: a revoke, a spent cap),
        so the run header never says "consent held" for one that is not."""
        held = dict(self.consents)
        if not held or self.backend is None:
            return

        def checked(active: dict[str, str]) -> None:
            self._keep_active(held, active)
            self._run_header(self.run)

        self.background(lambda backend: active_consents(backend, held), checked)

    def _run_header(self, run: FlowRun | None) -> None:
        line = self.query_one("#flow-run", Static)
        if run is None or self.bundle is None:
            line.update("")
            return
        held = " · consent held" if run.run_id in self.consents else ""
        line.update(Text(plain(f"{run.run_id} · {run.etag}{held}")))

    def _fill_runs(self, keep: str | None) -> None:
        table = self.query_one("#flow-runs", DataTable)
        table.clear()
        for run in self.runs:
            finished = sum(s.status in FINISHED_STEP for s in run.step_states)
            table.add_row(  # Text cells: run store values are neither markup nor controls
                Text(plain(f"{run.flow_id.removeprefix('flow_')}@{run.flow_version}")),
                Text(plain(run.status)),
                f"{finished}/{len(run.step_states)}",
                Text(plain(run.started[5:16].replace("T", " "))),
                key=run.run_id,
            )
        ids = [r.run_id for r in self.runs]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
            self.show(self.runs[ids.index(keep)])
        elif self.runs:
            table.move_cursor(row=0)
            self.show(self.runs[0])
        else:
            self.show(None)

    def show(self, run: FlowRun | None) -> None:
        """Fill the steps table for ``run`` and put the cursor on its frontier."""
        self.run = run
        self.bundle = self.bundles.get(run.run_id) if run is not None else None
        table = self.query_one("#flow-steps", DataTable)
        table.clear()
        self._run_header(run)
        if run is None or self.bundle is None:
            self._show_detail()
            return
        states = run.step_states
        frontier = next((i for i, s in enumerate(states) if s.status not in FINISHED_STEP), None)
        for index, (state, step) in enumerate(zip(states, self.bundle.steps, strict=True)):
            here = index == frontier
            style = "bold reverse" if here else ""
            table.add_row(
                Text("▶" if here else MARKS.get(state.status, "?"), style=style),
                Text(str(step.ordinal), style=style),
                Text(plain(step.owned_job), style=style),
                Text(plain(state.status), style=style),
                Text(plain(self._proof(state))),
                key=state.step_id,
            )
        if frontier is not None:
            table.move_cursor(row=frontier)
        self._show_detail()

    @staticmethod
    def _proof(state: StepState) -> str:
        if state.skip_reason:  # a skip is proven by its reason
            return str(state.skip_reason)
        if state.verified:
            return "verified"
        return "evidence" if state.evidence_ref else ""

    def _show_detail(self) -> None:
        """The step under the cursor, in full: what the narrow table cannot show."""
        detail = self.query_one("#flow-detail", Static)
        target = self._cursor_step()
        if target is None or self.bundle is None:
            detail.update(Text("Select a run to see its steps.", style="dim"))
            return
        state, step = target
        text = Text()
        text.append(f"#{step.ordinal} {plain(step.owned_job)}", style="bold")
        text.append(f"  {plain(state.status)}")
        proof = self._proof(state)
        if proof:
            text.append(f" · {plain(proof)}")
        text.append(f"\n{step.automatable} · verify: {step.verification.kind}", style="dim")
        if step.verification.evidence_required:
            text.append(" (evidence required)", style="dim")
        if state.evidence_ref:
            text.append(f"\nevidence: {plain(state.evidence_ref)}")
        interrupted = self._interrupted(state.step_id)
        if interrupted is not None:
            text.append(
                f"\nlast execution interrupted (its process died; lease expired): "
                f"{plain(str(interrupted['execution_id']))}, "
                f"{plain(str(interrupted['cost_units']))} units charged",
                style="bold",
            )
        reasons = plain(", ".join(declared_skip_reasons(step)))
        text.append("\nskip: " + (reasons or "not skippable"), style="dim")
        rule = when_not_to_run(step)
        if rule:
            text.append(f"\nwhen not to run: {plain(rule)}", style="dim")
        detail.update(text)

    def _interrupted(self, step_id: str) -> dict[str, Any] | None:
        """The step's last execution, if a crash ended it (settled as ``interrupted``)."""
        if self.run is None:
            return None
        mine = [e for e in self.executions.get(self.run.run_id, []) if e["step_id"] == step_id]
        last = mine[-1] if mine else None
        return last if last is not None and last.get("failure") == "interrupted" else None

    def say(self, text: str, *, refused: bool = False, ok: bool = False, detail: str = "") -> None:
        """One line in the pane; the whole text (and any detail) behind ``o``."""
        self.last_status = text
        self.last_detail = detail or text
        status = self.query_one("#flow-status", Static)
        status.update(Text(plain(text.replace("\n", " ")), no_wrap=True, overflow="ellipsis"))
        status.set_class(refused, "-refused")
        status.set_class(ok, "-ok")

    def apply(self, result: FlowResult, done: str) -> bool:
        """Show a handler's result: the refusal's code, or ``done`` and the updated run."""
        if isinstance(result, FlowRefusal):
            self.say(refusal_line(result), refused=True, detail=refusal_detail(result))
            self.post_message(self.Refused(self, result))
            return False
        run = _typed_run(result.get("run"))
        self.say(done, ok=True)
        if run is not None:
            self.reload(select=run.run_id)
            self.post_message(self.RunChanged(self, run))
        return True

    @on(DataTable.RowHighlighted, "#flow-runs")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        run = next((r for r in self.runs if r.run_id == key), None)
        if run is not None and (self.run is None or run.run_id != self.run.run_id):
            self.show(run)

    @on(DataTable.RowHighlighted, "#flow-steps")
    def _step_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    # --------------------------------------------------------------------- targets

    def _cursor_step(self) -> tuple[StepState, FlowStep] | None:
        if self.run is None or self.bundle is None or not self.run.step_states:
            return None
        table = self.query_one("#flow-steps", DataTable)
        row = table.cursor_row if table.row_count else 0
        states = self.run.step_states
        index = min(max(row, 0), len(states) - 1)
        return states[index], self.bundle.steps[index]

    def _target(self) -> tuple[FlowRun, StepState, FlowStep] | None:
        """The selected run and the step under the steps cursor (the frontier by default)."""
        if not self.ready():
            return None
        target = self._cursor_step()
        if self.run is None or target is None:
            self.say("No run selected: press n to start one.")
            return None
        return self.run, target[0], target[1]

    def _advance(self, to_status: str, **extra: Any) -> None:
        target = self._target()
        if target is None:
            return
        run, state, _step = target
        request = {"run_id": run.run_id, "step_id": state.step_id, "to_status": to_status}
        self.background(
            lambda backend: backend.call("advance", {**request, **extra}),
            lambda result: self.apply(result, f"{state.step_id} → {to_status}"),
            write=True,
        )

    # --------------------------------------------------------------------- actions

    def action_reload(self) -> None:
        if self.ready():
            self.reload()

    def action_show_message(self) -> None:
        from ..screens.message import MessageScreen

        self.app.push_screen(MessageScreen("Flow runs: last message", self.last_detail or "—"))

    def action_start_run(self) -> None:
        if not self.ready():
            return

        def listed(flows: FlowResult) -> None:
            if isinstance(flows, FlowRefusal):
                self.apply(flows, "")
                return
            if not flows["flows"]:
                self.say("No flows in this workspace's flows/ folder.")
                return
            options = [
                (f"{f['flow_id']}@{f['version']}", f"{f['title']}  ({f['flow_id']}@{f['version']})")
                for f in flows["flows"]
            ]
            self.app.push_screen(PickerScreen("Start a run of which flow?", options), chosen)

        def chosen(key: str | None) -> None:
            if key is None:
                return
            flow_id, _, version = key.partition("@")

            def started(result: FlowResult) -> None:
                text = ""
                if isinstance(result, dict):
                    text = f"Started {result['run']['run_id']} on {key}"
                self.apply(result, text)

            def start(values: dict[str, str]) -> None:
                request: dict[str, Any] = {"flow_id": flow_id, "flow_version": version}
                if values:
                    request["inputs"] = values
                self.background(lambda b: b.call("start", request), started, write=True)

            def given(values: dict[str, str] | None) -> None:
                if values is not None:
                    start({k: v for k, v in values.items() if v.strip()})

            def asked(found: tuple[list[tuple[str, str]], list[FlowInput]]) -> None:
                fields, declared = found
                if not fields:
                    start({})
                    return

                def check(values: dict[str, str]) -> str | None:
                    # The handler's own check (`run_inputs`), in place: a refused form
                    # stays open with the focus in it, and nothing is sent.
                    problems = input_problems(declared, values)
                    return problems_text(problems) if problems else None

                form = InputFormScreen(
                    f"Inputs for {key}", [Field(name, label) for name, label in fields], check
                )
                self.app.push_screen(form, given)

            self.background(
                lambda backend: (
                    start_fields(backend, flow_id, version),
                    backend.start_inputs(flow_id, version),
                ),
                asked,
            )

        self.background(lambda backend: backend.call("flows"), listed)

    def action_advance(self) -> None:
        target = self._target()
        if target is not None:
            self._advance("done" if target[1].status == "in_progress" else "in_progress")

    def action_approve(self) -> None:
        self._advance("done", approve=True)

    def action_block(self) -> None:
        target = self._target()
        if target is not None:
            self._advance("in_progress" if target[1].status == "blocked" else "blocked")

    def action_skip(self) -> None:
        target = self._target()
        if target is None:
            return
        _run, state, step = target
        reasons = declared_skip_reasons(step)
        rule = when_not_to_run(step)

        def chosen(reason: str | None) -> None:
            if reason is not None:
                self._advance("skipped", skip_reason=reason)

        self.app.push_screen(
            PickerScreen(
                f"Skip {state.step_id} because…",
                [(reason, SKIP_REASON_LABELS[reason]) for reason in reasons],
                f"When not to run: {rule}" if rule else "",
            ),
            chosen,
        )

    def action_evidence(self) -> None:
        target = self._target()
        if target is None:
            return
        run, state, _step = target

        def record(kind: str, ref: str) -> None:
            request = {
                "run_id": run.run_id,
                "step_id": state.step_id,
                "evidence_ref": ref,
                "pointer_kind": kind,
            }
            self.background(
                lambda backend: backend.call("evidence", request),
                lambda result: self.apply(result, f"Evidence ({kind}) attached to {state.step_id}"),
                write=True,
            )

        def typed(values: dict[str, str] | None) -> None:
            if values is not None:
                ref = values["pointer"].strip()
                record(pointer_kind_for(ref), ref)

        def chosen(key: str | None) -> None:
            if key is None:
                return
            if key == TYPE_POINTER:
                form = InputFormScreen(
                    f"Evidence for {state.step_id}",
                    [Field("pointer", "Pointer (op_id, sha256, prop_… or artifact id)")],
                    check_pointer,
                )
                self.app.push_screen(form, typed)
                return
            kind, _, ref = key.partition(":")
            record(kind, ref)

        def offered(offers: list[EvidenceOffer]) -> None:
            options = [(f"{o.pointer_kind}:{o.evidence_ref}", o.label) for o in offers]
            options.append((TYPE_POINTER, "Type a pointer (id or sha256)…"))
            self.app.push_screen(PickerScreen("Attach which evidence?", options), chosen)

        document = self.open_document
        self.background(lambda _backend: transcript_offers(document), offered)

    def action_consent(self) -> None:
        if not self.ready():
            return
        if self.run is None or self.backend is None:
            self.say("No run selected: press n to start one.")
            return
        run_id = self.run.run_id
        policy = self.backend.posture.policy
        lanes = list(policy.allowed_lanes) or ["local_default"]
        form = InputFormScreen(
            f"Consent to automatable execution on {run_id} (lanes {', '.join(lanes)})",
            [
                Field("cap", "Cost cap (units)", str(policy.cost_cap_units or 1)),
                Field("ttl", "Valid for (seconds)", "3600"),
            ],
            check_consent(policy.cost_cap_units or None),
        )

        def minted(result: FlowResult) -> None:
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

        def filled(values: dict[str, str] | None) -> None:
            if values is None:
                return
            request: dict[str, Any] = {
                "run_id": run_id,
                "allowed_lanes": lanes,
                "cost_cap_units": int(values["cap"]),
                "ttl_seconds": int(values["ttl"]),
            }
            self.background(lambda b: b.call("consent", request), minted, write=True)

        self.app.push_screen(form, filled)

    def action_dry_run(self) -> None:
        self._execute(dry_run=True)

    def action_execute(self) -> None:
        self._execute(dry_run=False)

    def _execute(self, *, dry_run: bool) -> None:
        target = self._target()
        if target is None:
            return
        run, state, _step = target
        request = {
            "run_id": run.run_id,
            "step_id": state.step_id,
            "consent_id": self.consents.get(run.run_id, NO_CONSENT),
            "dry_run": dry_run,
        }
        self.say(("Checking gates for " if dry_run else "Executing ") + state.step_id + " …")

        def executed(result: FlowResult) -> None:
            if isinstance(result, FlowRefusal):
                self.apply(result, "")
            elif dry_run:
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

        self.background(lambda b: b.call("execute_automatable", request), executed, write=True)

    def action_submit_review(self) -> None:
        if not self.ready():
            return
        if self.run is None:
            self.say("No run selected: press n to start one.")
            return
        run_id = self.run.run_id

        def submitted(result: FlowResult) -> None:
            if isinstance(result, FlowRefusal):
                self.apply(result, "")
            else:
                proposal = result["proposal"]
                self.say(f"Proposal {proposal['proposal_id']} is pending review", ok=True)

        def filled(values: dict[str, str] | None) -> None:
            if values is not None:
                request = {"run_id": run_id, "intent": values["intent"].strip()}
                self.background(lambda b: b.call("submit_review", request), submitted, write=True)

        form = InputFormScreen(
            f"Submit {run_id}'s outcome to review",
            [Field("intent", "Intent (what the run produced, for the reviewer)")],
            check_intent,
        )
        self.app.push_screen(form, filled)

    def action_proposals(self) -> None:
        if self.ready():
            review_proposals(self, PickerScreen)

    def action_consents(self) -> None:
        if self.ready():
            manage_consents(self, PickerScreen)
