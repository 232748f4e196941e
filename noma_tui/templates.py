"""Starting points for ``add_block``, one per directive type.

A template is source the writer edits before the proof; ids are filled with the first free
``<type>-N`` so a new block never starts with an ``id_conflict``, and an evidence-like
block points ``for=`` at the selected claim when there is one. The templates already carry
the attributes the validator asks for (a risk's owner, a decision's status), so a new block
does not arrive with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.noma.api import IdIndex

from .ops import free_id


@dataclass(frozen=True, slots=True)
class Template:
    name: str  # the directive name
    help: str
    stem: str  # id stem
    attrs: str  # extra attributes, ``{for}`` replaced by the claim id
    body: str

    def render(self, idx: IdIndex, claim: str | None = None, colons: int = 2) -> str:
        ident = free_id(idx, self.stem)
        attrs = self.attrs.replace("{for}", claim or "CLAIM-ID")
        fence = ":" * colons
        group = f'id="{ident}"' + (f" {attrs}" if attrs else "")
        return f"{fence}{self.name}{{{group}}}\n{self.body}\n{fence}\n"


TEMPLATES: tuple[Template, ...] = (
    Template("claim", "A statement the document argues for", "claim", "confidence=0.5",
             "State the claim in one or two sentences."),
    Template("evidence", "Support for a claim (for= the claim)", "ev", 'for="{for}"',
             "What was measured or observed, and where."),
    Template("counterevidence", "Evidence against a claim", "cev", 'for="{for}"',
             "What points the other way."),
    Template("risk", "A risk with an owner", "risk", 'owner="OWNER" severity="medium"',
             "What could go wrong, and what would trigger it."),
    Template("decision", "A decision with its status", "decision", 'status="proposed"',
             "What was decided, and why."),
    Template("note", "A side note", "note", "", "Note text."),
    Template("assumption", "An assumption the argument rests on", "assumption", "",
             "What is taken as given."),
    Template("open_question", "A question still open", "question", "",
             "What needs answering?"),
    Template("table", "A pipe table (edit cells in the grid)", "table", "header",
             "Column A | Column B\nvalue | value"),
    Template("dataset", "Inline data rows with a schema", "dataset", "",
             "schema:\n  label: string\n  value: number\nrows:\n  - [first, 1]"),
    Template("agent_task", "A task for an agent, with a scope", "task", 'scope="SCOPE"',
             "What the agent should do."),
    Template("figure", "A figure with alt text", "figure", 'src="figure.png" alt="ALT TEXT"',
             "Caption."),
)  # fmt: skip

BY_NAME = {t.name: t for t in TEMPLATES}
