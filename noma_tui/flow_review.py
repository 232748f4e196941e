"""Reviewing proposals and listing/revoking consents from the flow pane.

The logic is here, over the pane's flow backend (actions "proposals", "proposal",
"review", "consents", "revoke_consent"), so the pane only binds a key and calls in. A
proposal is decided on `ProposalReviewScreen`, which shows what approving it would write
(for a bundle: the base version, the change summary and the diff), never on a bare
Approve/Reject choice. The pane passes
its own choice dialog class (`PickerScreen`), so this module does not depend on where the
pane lives; every handler call goes through the pane's `background` (a thread worker), so
a store held by another writer never freezes the UI.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.screen import ModalScreen

from core.flow import FlowRefusal, FlowResult
from core.flow.backend import FlowBackend
from core.flow.records import FlowRun
from noma_tui.screens.proposal import ProposalReviewScreen

ChoiceFactory = Callable[[str, list[tuple[str, str]]], ModalScreen[str | None]]


class FlowPaneLike(Protocol):
    backend: FlowBackend | None
    run: FlowRun | None
    app: Any

    def say(self, text: str, *, refused: bool = False, ok: bool = False) -> None: ...

    def background(
        self,
        fn: Callable[[FlowBackend], Any],
        then: Callable[[Any], None],
        *,
        write: bool = False,
    ) -> None: ...


def _refused(pane: FlowPaneLike, result: FlowRefusal) -> None:
    pane.say(f"✗ {result.code} ({result.status}) {result.message}", refused=True)


def _printable(text: str, limit: int = 48) -> str:
    clean = "".join(ch if ch.isprintable() else "?" for ch in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def review_proposals(pane: FlowPaneLike, choice: ChoiceFactory) -> None:
    """Pick a pending proposal (run outcome or import), then approve or reject it."""
    if pane.backend is None:
        return
    pane.background(
        lambda backend: backend.call("proposals", {"status": "pending"}),
        lambda result: _listed_proposals(pane, choice, result),
    )


def _listed_proposals(pane: FlowPaneLike, choice: ChoiceFactory, result: FlowResult) -> None:
    if isinstance(result, FlowRefusal):
        _refused(pane, result)
        return
    pending = result["proposals"]
    if not pending:
        pane.say("No proposals are pending review.", ok=True)
        return
    options = [
        (
            p["proposal_id"],
            f"{p['kind'].removeprefix('flow_')}  {p['flow_id']}@{p['flow_version']}  "
            f"{_printable(p.get('intent') or '')}",
        )
        for p in pending
    ]

    def chosen(key: str | None) -> None:
        if key is not None and pane.backend is not None:
            pane.background(
                lambda backend: backend.call("proposal", {"proposal_id": key}),
                lambda shown: show_proposal(pane, key, shown),
            )

    pane.app.push_screen(choice("Pending proposals", options), chosen)


def show_proposal(pane: FlowPaneLike, proposal_id: str, shown: FlowResult) -> None:
    """Put the proposal (and what it changes) in front of the human; decide on a or r."""
    if isinstance(shown, FlowRefusal):
        _refused(pane, shown)
        return

    def decided(approve: bool | None) -> None:
        if approve is None or pane.backend is None:
            return
        request = {"proposal_id": proposal_id, "approve": approve}

        def reviewed(result: FlowResult) -> None:
            if isinstance(result, FlowRefusal):
                _refused(pane, result)
            else:
                pane.say(f"Proposal {proposal_id} {result['proposal']['status']}", ok=True)

        pane.background(lambda backend: backend.call("review", request), reviewed, write=True)

    pane.app.push_screen(ProposalReviewScreen(shown), decided)


def manage_consents(pane: FlowPaneLike, choice: ChoiceFactory) -> None:
    """List the selected run's consents (yours only); pick an active one to revoke it."""
    if pane.backend is None or pane.run is None:
        pane.say("No run selected: press n to start one.")
        return
    run_id = pane.run.run_id
    pane.background(
        lambda backend: backend.call("consents", {"run_id": run_id}),
        lambda result: _listed_consents(pane, choice, run_id, result),
    )


def _listed_consents(
    pane: FlowPaneLike, choice: ChoiceFactory, run_id: str, result: FlowResult
) -> None:
    if isinstance(result, FlowRefusal):
        _refused(pane, result)
        return
    consents = result["consents"]
    if not consents:
        pane.say(f"No consents for {run_id}: press c to give one.", ok=True)
        return
    options = [
        (
            c["consent_ref"],
            f"{c['state']:<8} {c['cost_consumed_units']}/{c['cost_cap_units']} units  "
            f"until {c['expires_at']}",
        )
        for c in consents
    ]

    def chosen(ref: str | None) -> None:
        if ref is None or pane.backend is None:
            return

        def revoked(out: FlowResult) -> None:
            if isinstance(out, FlowRefusal):
                _refused(pane, out)
            else:
                pane.say(f"Consent revoked (was {out['consent']['cost_cap_units']} units)", ok=True)

        pane.background(
            lambda backend: backend.call("revoke_consent", {"consent": ref}), revoked, write=True
        )

    pane.app.push_screen(choice(f"Consents for {run_id} (Enter revokes)", options), chosen)
