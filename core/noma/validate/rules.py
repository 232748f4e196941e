"""What each validator rule reads: its declaration, written beside the rule (`rule`).

The incremental engine keeps a finding after an edit only when nothing the rule that made
it reads has changed (salsa's early cutoff, by declaration rather than by recording). So
every rule says, where it is defined, which pass runs it (its ``scope``), the codes it
reports, and the facts it reads; `catalog` derives from those declarations what a splice
must compare (`catalog.BODY_FACTS`, ``ALL_ATTR_FACTS``, ``DOCUMENT_KINDS``, ...). A rule
without a declaration cannot enter the pipeline (`declaration` refuses it), and a
declaration naming a fact the engine does not know is refused when its module is
imported: a new rule can no longer keep stale findings silently.

Scopes:

- ``block``: a finding on a block depends on that block alone (its name, attributes, body,
  ``noverify``) and, at most, on the declared profiles. A splice re-runs these rules on the
  re-parsed run and keeps the rest, moved by the line delta.
- ``cross-block``: a finding may depend on other blocks (references, backing evidence,
  formulas, plots and their datasets, memories).
- ``document``: a finding depends on document-level facts (the frontmatter, the clock,
  other files, the parser's untidy attribute groups) beside the blocks it names.

Cross-block and document rules run in the whole-document pass; their findings are kept
after a splice only when the facts they read are unchanged (`incremental_rules`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..diagnostics import Diagnostic
from ..scan_facts import TARGET_KEYS
from .registry import SEVERITIES
from .scan import Scan

Scope = Literal["block", "cross-block", "document"]
SCOPES: frozenset[str] = frozenset({"block", "cross-block", "document"})

# The facts the engine knows how to compare between two versions of a run, with what each
# is. A declaration may name only these (and directive kinds, for ``kinds``, ``attrs_of``
# and ``body_of``).
FACTS: dict[str, str] = {
    "names": "the id and aliases of every block (attributes ``id``, ``aliases``)",
    "references": "reference attributes of every block (``for=``, ``parent=``, ``dataset=``, "
    "and ``target=``/``block=``/``ref=`` on the review directives)",
    "noverify": "the ``noverify`` flag of every block",
    "kinds": "how many checked directives of each kind the document holds",
    "sites": "text that can hold a wikilink (bodies, paragraphs, titles) and its owner",
    "attr-problems": "the attribute groups the parser had to skip text in",
    "frontmatter": "the frontmatter's declarations (with the ``--profile`` override)",
    "profiles": "the profiles in force",
    "clock": "today's date",
    "files": "other files, relative to the document's folder",
}
# The facts a ``block`` rule may read beside its own block: anything else relates blocks
# or reads the document, and a splice that re-runs the rule on the run alone would miss it.
BLOCK_FACTS: frozenset[str] = frozenset({"profiles"})
# The attributes each generic fact covers, on blocks of any kind.
FACT_ATTRS: dict[str, frozenset[str]] = {
    "names": frozenset({"id", "aliases"}),
    "noverify": frozenset({"noverify"}),
    "references": TARGET_KEYS,
}
# The facts that give a rule an argument beside ``(scan, ..., out)``, in call order, and
# the argument each gives (`Inputs`).
ARGUMENT_FACTS: tuple[tuple[str, str], ...] = (
    ("frontmatter", "profile"),
    ("clock", "day"),
    ("files", "base_dir"),
    ("profiles", "profiles"),
)


class UnknownFact(ValueError):
    """A declaration named a fact, scope or code the engine does not know."""


class Undeclared(LookupError):
    """A rule entered the pipeline without a declaration."""


RuleFn = Callable[..., None]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule and what it reads. ``kinds``: directive kinds it reads beyond their names
    (``attrs_of``/``body_of``: kinds whose every attribute / whose body it reads; both
    are included in ``kinds``); ``lines_in_message``: codes whose message names a line of
    another block (such a finding cannot be moved by a line delta)."""

    check: RuleFn
    scope: Scope
    codes: frozenset[str]
    reads: frozenset[str]
    kinds: frozenset[str]
    attrs_of: frozenset[str]
    body_of: frozenset[str]
    lines_in_message: frozenset[str]
    arguments: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.check.__name__

    def run(self, scan: Scan, inputs: dict[str, Any], out: list[Diagnostic]) -> None:
        """Run the rule over ``scan``, passing the arguments its facts call for."""
        self.check(scan, *[inputs[a] for a in self.arguments], out)


_REGISTRY: dict[RuleFn, Rule] = {}


def rule(
    *,
    scope: Scope,
    codes: tuple[str, ...],
    reads: tuple[str, ...] = (),
    kinds: tuple[str, ...] = (),
    attrs_of: tuple[str, ...] = (),
    body_of: tuple[str, ...] = (),
    lines_in_message: tuple[str, ...] = (),
) -> Callable[[RuleFn], RuleFn]:
    """Declare the rule it decorates (see the module docstring); raises `UnknownFact`
    for a fact, scope or code the engine does not know, or a declaration that does not fit
    the function (its arguments, a block rule reading other blocks)."""

    def register(check: RuleFn) -> RuleFn:
        declared = make_rule(
            check,
            scope=scope,
            codes=codes,
            reads=reads,
            kinds=kinds,
            attrs_of=attrs_of,
            body_of=body_of,
            lines_in_message=lines_in_message,
        )
        _REGISTRY[check] = declared
        return check

    return register


def make_rule(
    check: RuleFn,
    *,
    scope: str,
    codes: tuple[str, ...],
    reads: tuple[str, ...] = (),
    kinds: tuple[str, ...] = (),
    attrs_of: tuple[str, ...] = (),
    body_of: tuple[str, ...] = (),
    lines_in_message: tuple[str, ...] = (),
) -> Rule:
    """A checked `Rule` (not registered): what `rule` registers."""
    where = f"{check.__module__}.{check.__qualname__}"
    if scope not in SCOPES:
        raise UnknownFact(f"{where}: unknown scope {scope!r}")
    unknown = [f for f in reads if f not in FACTS]
    if unknown:
        raise UnknownFact(f"{where}: unknown facts {unknown} (known: {sorted(FACTS)})")
    if not codes or any(c not in SEVERITIES for c in codes):
        raise UnknownFact(f"{where}: codes {list(codes)} must be registered codes")
    if not set(lines_in_message) <= set(codes):
        raise UnknownFact(f"{where}: lines_in_message names codes it does not report")
    if scope == "block" and not set(reads) <= BLOCK_FACTS:
        raise UnknownFact(f"{where}: a block rule reads only its block and {sorted(BLOCK_FACTS)}")
    arguments = tuple(arg for fact, arg in ARGUMENT_FACTS if fact in reads)
    params = inspect.signature(check).parameters
    if len(params) != 2 + len(arguments):
        raise UnknownFact(f"{where}: takes {list(params)}, its facts give (scan, {arguments}, out)")
    return Rule(
        check=check,
        scope=scope,  # type: ignore[arg-type]  # checked against SCOPES above
        codes=frozenset(codes),
        reads=frozenset(reads),
        kinds=frozenset((*kinds, *attrs_of, *body_of)),
        attrs_of=frozenset((*attrs_of, *body_of)),
        body_of=frozenset(body_of),
        lines_in_message=frozenset(lines_in_message),
        arguments=arguments,
    )


def declaration(check: RuleFn) -> Rule:
    """The declaration of ``check``; `Undeclared` when it has none."""
    try:
        return _REGISTRY[check]
    except KeyError:
        raise Undeclared(
            f"{check.__module__}.{check.__qualname__} has no rule declaration "
            "(decorate it with core.noma.validate.rules.rule)"
        ) from None


def registered() -> list[Rule]:
    """Every declared rule, in the order their modules declared them."""
    return list(_REGISTRY.values())
