"""Each id's first block and the ids several blocks carry, as the panes index a version:
the shortcut that answers "no duplicates" from the first-block map agrees with the count."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from noma_tui.document import first_blocks, repeated

names = st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c", "claim-1", "x/y"])))


@given(names)
def test_repeated_with_the_first_map_equals_the_count(listed: list[str | None]) -> None:
    first = first_blocks(listed)
    want = {n for n in listed if n is not None and listed.count(n) > 1}
    assert repeated(listed) == want
    assert repeated(listed, first) == want
    assert all(listed[k] == n and n not in listed[:k] for n, k in first.items())


def test_the_common_cases() -> None:
    assert repeated(["a", None, "b"], first_blocks(["a", None, "b"])) == set()
    assert repeated(["a", None, "a"], first_blocks(["a", None, "a"])) == {"a"}
    assert first_blocks(["a", None, "a"]) == {"a": 0}
