"""A heading added, removed or retitled splices in the size of the change, when provable.

`core.noma.incremental` takes the lazy path (moved blocks copied by `nodes.shifted`, the
run's ids planned alone) only when the document's slug counts prove no id outside the run
can change; `validate.incremental_rules` keeps the base version's whole-document findings
only when the heading names gained or lost are carried by no other block and named by no
reference attribute (wikilinks may name them: their sites are checked again). These tests
pin both ways: taken where they should be (counted by `core.noma.paths_taken` and
the version's unmade block list, never from timing), and NOT taken where a later id, a
reference or a collision would change. Every case is also compared with a fresh full
parse and a full validation (`check_step`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from test_incremental_properties import TODAY, _diags, check_step

from bench.generate import generate
from core.noma.incremental import try_reparse
from core.noma.nodes import Document, Section
from core.noma.parser import parse
from core.noma.paths_taken import Observer, observing
from core.noma.validate import validate
from core.noma.validate.kept_findings import document_findings, has_recipes

# The paths taken inside one test: ``counted["splice:headings-local"]``,
# ``counted["kept:new-headings"]``, ... (a missing path counts 0).
Taken = Observer


@pytest.fixture
def counted() -> Iterator[Taken]:
    with observing() as taken:
        yield taken


def _validated(text: str) -> Document:
    doc = parse(text)
    validate(doc, today=TODAY)
    return doc


def _step(text: str, new_text: str) -> Document:
    """Splice (the base fully validated), compare with a fresh parse and validation."""
    return check_step(_validated(text), text, new_text)


def _insert_before(text: str, anchor: str, lines: str) -> str:
    assert anchor in text
    return text.replace(anchor, lines + anchor, 1)


BIG = generate(40, seed=3)
INSERTED = _insert_before(
    BIG, "## Finding 3: ", "## Added outside\n\nWritten by another editor.\n\n"
)


def _retitle(text: str, number: int, title: str) -> str:
    m = re.search(rf"^## Finding {number}: .*$", text, re.M)
    assert m is not None
    return text[: m.start()] + f"## Finding {number}: {title}" + text[m.end() :]


def _moved_sections_unread(doc: Document) -> bool:
    top = doc.children[-1]
    moved = [n for n in top.children if isinstance(n, Section) and n.line > 150]
    return bool(moved) and all(n._lazy is not None for n in moved)


# -- taken ---------------------------------------------------------------------------------


def test_a_new_unique_section_splices_lazily_and_keeps_the_findings(counted: Taken) -> None:
    base = _validated(BIG)
    spliced = try_reparse(base, BIG, INSERTED)
    assert spliced is not None
    assert counted["splice:headings-local"] == 1 and counted["splice:eager"] == 0
    assert spliced._id_nodes is None, "the block list is made from the tree when asked"
    assert _moved_sections_unread(spliced), "moved blocks are `shifted` copies, not made"
    assert has_recipes(spliced)[1] and counted["kept:new-headings"] == 1
    found = validate(spliced, today=TODAY)
    assert _moved_sections_unread(spliced), "validation read nothing below a moved block"
    assert _diags(found) == _diags(validate(parse(INSERTED), today=TODAY))
    check_step(base, BIG, INSERTED)  # and every other reading equals a full parse


def test_removing_it_again_splices_lazily_and_keeps_the_findings(counted: Taken) -> None:
    spliced = _step(INSERTED, BIG)
    assert counted["splice:headings-local"] >= 1 and counted["splice:eager"] == 0
    assert counted["kept:new-headings"] >= 1
    assert document_findings(spliced) is not None


def test_retitling_an_unreferenced_heading_keeps_the_findings(counted: Taken) -> None:
    new_text = _retitle(BIG, 39, "A title nothing else has")
    _step(BIG, new_text)
    assert counted["splice:headings-local"] >= 1 and counted["splice:eager"] == 0
    assert counted["kept:new-headings"] >= 1


def test_a_chain_of_heading_edits_on_unread_versions_stays_lazy(counted: Taken) -> None:
    text, doc = BIG, _validated(BIG)
    for k in range(4):
        new_text = _insert_before(text, f"## Finding {5 + k}: ", f"## Chained {k}\n\nBody {k}.\n\n")
        doc = check_step(doc, text, new_text)
        text = new_text
    assert counted["splice:headings-local"] >= 4 and counted["splice:eager"] == 0
    assert counted["kept:new-headings"] >= 4


# -- a later id would change: the eager path ----------------------------------------------

SMALL = "# T\n\n## A\n\npara\n\n## Body\n\ntext\n\n## Intro\n\nmore\n\n## Step 2\n\nlast\n"


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ("## Intro\n\n", "same slug as a later section: the later one becomes intro-2"),
        ("## Intro 2\n\n## Intro\n\n", "a natural intro-2 pushes a repeat to intro-3"),
        ("## Step\n\n## Step\n\n", "a later natural step-2 makes the run's repeat step-3"),
        ("## Step 2 2\n\n", "suffixed shape of a later slug"),
    ],
)
def test_a_slug_related_to_one_outside_takes_the_eager_path(
    counted: Taken, lines: str, why: str
) -> None:
    new_text = _insert_before(SMALL, "## Body", lines)
    _step(SMALL, new_text)
    assert counted["splice:headings-local"] == 0, why


def test_removing_the_first_of_two_repeats_renames_the_second() -> None:
    text = _insert_before(SMALL, "## Body", "## Intro\n\n")
    spliced = check_step(_validated(text), text, SMALL)  # intro-2 becomes intro again
    assert [n.id for n in spliced.children[0].children if isinstance(n, Section)][-2] == "intro"


def test_an_explicit_id_elsewhere_does_not_block_the_lazy_path(counted: Taken) -> None:
    text = SMALL.replace("## Intro", '## Intro {id="intro"}')
    new_text = _insert_before(text, "## Body", "## Intro\n\n")
    spliced = _step(text, new_text)
    assert counted["splice:headings-local"] >= 1, "explicit ids take no part in suffixing"
    assert counted["splice:eager"] == 0
    # ... but the new heading's id collides with the explicit one: findings are recomputed.
    assert counted["kept:new-headings"] == 0
    assert any(d.code == "duplicate-id" for d in validate(spliced, today=TODAY))


def test_a_level_one_heading_with_frontmatter_aliases_is_never_local(
    counted: Taken,
) -> None:
    text = "---\naliases: [home]\n---\n\nintro\n\nmore\n\nstill more\n\n# Root\n\n## A\n\nx\n"
    new_text = text.replace("intro\n", "# Earlier\n\nintro\n")
    spliced = _step(text, new_text)
    assert counted["splice:headings-local"] == 0 and counted["splice:eager"] >= 1
    # The aliases move to the new root; the old one, a moved copy, drops them.
    assert [(n.id, list(n.aliases)) for n in spliced.children if isinstance(n, Section)] == [
        ("earlier", ["home"]),
        ("root", []),
    ]


# -- the findings are recomputed: a reference or a collision ------------------------------


@pytest.mark.parametrize(
    ("extra", "heading", "why"),
    [
        (
            '::evidence{id="ev-x" for="added-outside"}\nBacked.\n::\n\n',
            "## Added outside",
            "a for= names the new id",
        ),
        ('::note{id="n9" aliases="added-outside"}\nx\n::\n\n', "## Added outside", "an alias"),
        ("", "## Claim 3", "the slug is a directive's id (duplicate-id)"),
        ("", '## P {id="twice"}\n\n## Q {id="twice"}', "the run holds one id twice"),
        ("", "## Quiet {noverify}", "a heading with noverify"),
        ("", "## Links [[claim-2]]", "a title holding a wikilink is a text site"),
    ],
)
def test_a_claimed_name_recomputes_the_whole_document_rules(
    counted: Taken, extra: str, heading: str, why: str
) -> None:
    text = BIG.replace("## Finding 30: ", extra + "## Finding 30: ", 1)
    new_text = _insert_before(text, "## Finding 3: ", f"{heading}\n\nWritten elsewhere.\n\n")
    _step(text, new_text)  # equal to a full validation either way
    assert counted["kept:new-headings"] == 0, why
    back = _step(new_text, text)  # and the removal
    assert counted["kept:new-headings"] == 0, why
    assert back is not None


# -- only wikilinks name it: the base findings stand, the linking sites are checked again --


def test_retitling_a_linked_heading_reports_the_broken_link_without_a_walk(
    counted: Taken,
) -> None:
    new_text = _retitle(BIG, 7, "Renamed")  # Finding 9 links to finding-7-...
    base = _validated(BIG)
    spliced = check_step(base, BIG, new_text)
    assert counted["splice:headings-local"] >= 1, "no other id moves: the parse stays lazy"
    assert counted["kept:linked-headings"] >= 1 and counted["kept:new-headings"] == 0
    found = validate(spliced, today=TODAY)
    broken = [d for d in found if d.code == "broken-reference" and "finding-7-" in d.message]
    assert len(broken) == 1 and broken[0].node_id == "finding-9-retention-under-load"
    # ... and back: the link resolves again, the finding goes (the base now a spliced one).
    again = check_step(spliced, new_text, BIG)
    assert counted["kept:linked-headings"] >= 2
    assert not any("finding-7-" in d.message for d in validate(again, today=TODAY))


def test_a_new_heading_fixes_links_that_were_broken(counted: Taken) -> None:
    text = BIG.replace(
        "## Finding 30: ", "See [[added-outside]] and [[gone]] here.\n\n## Finding 30: ", 1
    )
    new_text = _insert_before(text, "## Finding 3: ", "## Added outside\n\nWritten elsewhere.\n\n")
    spliced = _step(text, new_text)
    assert counted["kept:linked-headings"] >= 1
    found = [d.message for d in validate(spliced, today=TODAY) if d.code == "broken-reference"]
    assert any("[[gone]]" in m for m in found) and not any("added-outside" in m for m in found)
    _step(new_text, text)  # and removing it breaks the link again
    assert counted["kept:linked-headings"] >= 2


def test_a_memory_document_checks_its_links_afresh(counted: Taken) -> None:
    text = (
        "---\nprofile: memory\n---\n\n# Memories\n\n## Topic\n\nplain\n\n"
        '## Other\n\n::memory{id="m1" type="fact"}\nSee [[topic]].\n::\n'
    )
    new_text = text.replace("## Topic", "## Renamed topic")
    spliced = _step(text, new_text)  # a wikilink to a heading is a memory-rule finding too
    assert counted["kept:linked-headings"] >= 1, "the splice offers the relink..."
    assert document_findings(spliced) is not None
    codes = {d.code for d in validate(spliced, today=TODAY)}
    assert "broken-reference" in codes
