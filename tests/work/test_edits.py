"""Changing an item: each field checked as ``work add`` checks it, ``rev`` raised only when
something differs, a cycle of ``after`` refused; a claimed item keeps its paths and ``after``
(refused, naming what may change), a done one changes not at all; only a failed item is
retried, open again with nothing left of its end."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memkeeper.errors import Invalid, Refused
from memkeeper.work.edits import Changes, edited, retried
from memkeeper.work.items import Item

NOW = 1_700_000_000.0


def item(id: int, *after: int, state: str = "open", **kw: object) -> Item:
    base = Item(id, 3, f"item {id}", "open", "a", NOW, ("src/",), 1, after, "body")
    return replace(base, state=state, **kw)  # type: ignore[arg-type]


def test_the_named_fields_change_and_the_rev_rises() -> None:
    one, two = item(1), item(2)
    known = {1: one, 2: two}
    got = edited(
        two, Changes(title=" New ", priority=-4, paths=("docs/./a.md",), after=(1, 1)), known
    )
    assert (got.title, got.priority, got.paths, got.after, got.body) == (
        "New", -4, ("docs/a.md",), (1,), "body",
    )  # fmt: skip
    assert got.rev == two.rev + 1
    assert edited(two, Changes(paths=(), after=()), known) == replace(two, rev=4, paths=())


def test_no_difference_changes_nothing_and_no_field_named_is_bad_input() -> None:
    one = item(1)
    assert edited(one, Changes(title="item 1", paths=("src/",)), {1: one}) is one
    with pytest.raises(Invalid, match="nothing to edit"):
        edited(one, Changes(), {1: one})


def test_bad_values_and_cycles_are_refused() -> None:
    one, two = item(1), item(2, 1)
    known = {1: one, 2: two}
    with pytest.raises(Invalid, match="needs a title"):
        edited(one, Changes(title="  "), known)
    with pytest.raises(Invalid, match="no work item 7"):
        edited(one, Changes(after=(7,)), known)
    with pytest.raises(Invalid, match=r"work items 1 → 2 → 1 wait on each other") as cycle:
        edited(one, Changes(after=(2,)), known)
    assert cycle.value.reason == "cycle"
    with pytest.raises(Invalid, match="1 → 1"):
        edited(one, Changes(after=(1,)), known)


def test_a_claimed_item_keeps_its_paths_and_after_and_a_done_one_everything() -> None:
    taken = item(1, state="claimed", agent="w2", claim="c9")
    with pytest.raises(Refused, match=r"claimed by w2 \(claim c9\): its paths and after cannot"):
        edited(taken, Changes(paths=("docs/",), after=(2,)), {1: taken, 2: item(2)})
    assert edited(taken, Changes(title="clearer", paths=("src/",)), {1: taken}).title == "clearer"
    with pytest.raises(Invalid, match="is done") as done:
        edited(item(1, state="done"), Changes(title="x"), {})
    assert done.value.reason == "done"


def test_only_a_failed_item_is_retried() -> None:
    failed = item(1, state="failed", ended_at=NOW + 5, reason="red", agent="w1", claim="c1")
    again = retried(failed)
    assert (again.state, again.ended_at, again.rev, again.reason) == ("open", None, 4, "retried")
    assert (again.agent, again.claim) == ("w1", "c1")  # who failed it, still named
    with pytest.raises(Invalid, match="only a failed item is retried; to give up a claimed"):
        retried(item(1, state="claimed"))
    with pytest.raises(Invalid, match="is done, not failed"):
        retried(item(1, state="done"))
