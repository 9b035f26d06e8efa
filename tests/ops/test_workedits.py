"""Work items after they were added, on both stores: an item waiting on a failed one says so
until the failed one is retried, and then it and its dependents follow; ``edit`` is a
compare-and-swap on the item's rev that refuses a claimed item's paths and any cycle, changing
nothing then; ``add`` keeps the ended items within the policy's ``work:`` bound, never
dropping one an unfinished item depends on."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.errors import Conflict, Invalid, Refused
from memkeeper.work.blocked import Blocker
from memkeeper.work.keeping import TRIM_EVERY

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def other(memory: Memory, sample: Path) -> Iterator[Memory]:
    """Agent ``agent-b`` on the same root and store as ``memory``."""
    opened = Memory.open(sample, agent="agent-b")
    yield opened
    opened.close()


def events(memory: Memory, type: str) -> list[tuple[int, str]]:
    return [(e.data["id"], e.actor) for e in memory.events() if e.type == type]


def test_a_failed_dependency_blocks_until_it_is_retried(memory: Memory, other: Memory) -> None:
    first = memory.work.add("build", paths=["src/"])
    second = memory.work.add("test", after=[first.id])
    third = memory.work.add("ship", after=[second.id])
    memory.work.next()
    memory.work.fail(first.id, "compiler crashed")
    assert memory.work.blockers(second.id) == (Blocker(first.id, "compiler crashed"),)
    assert other.work.blockers(third.id) == (Blocker(first.id, "compiler crashed", second.id),)
    with pytest.raises(
        Invalid, match=f"to put a failed one back in the pool run: memkeeper work retry {first.id}"
    ):
        memory.work.give_back(first.id)
    again = other.work.retry(first.id)
    assert (again.state, again.reason) == ("open", "retried")
    assert events(memory, "work.retried") == [(first.id, "agent-b")]
    assert other.work.blockers(third.id) == ()
    assert [i.id for i in other.work.list(ready=True)] == [first.id]
    item, claim = other.work.next()
    other.work.done(item.id, claim=claim.id)
    assert [i.id for i in memory.work.list(ready=True)] == [second.id]  # its dependents follow


def test_edit_is_a_compare_and_swap_on_the_items_rev(memory: Memory, other: Memory) -> None:
    item = memory.work.add("triage", paths=["docs/"], priority=1)
    changed = other.work.edit(item.id, expect_rev=item.rev, title="Triage bugs", priority=9)
    assert (changed.title, changed.priority, changed.rev) == ("Triage bugs", 9, item.rev + 1)
    with pytest.raises(Conflict, match=f"at rev {changed.rev}, not {item.rev}") as stale:
        memory.work.edit(item.id, expect_rev=item.rev, title="mine")
    assert stale.value.current.to_json()["title"] == "Triage bugs"
    assert memory.work.show(item.id) == changed
    assert events(memory, "work.edited") == [(item.id, "agent-b")]
    edited = [e.data["changed"] for e in memory.events() if e.type == "work.edited"]
    assert edited == [["title", "priority"]]


def test_an_item_after_a_done_one_can_be_edited(memory: Memory) -> None:
    first = memory.work.add("one")
    second = memory.work.add("two", after=[first.id])
    item, claim = memory.work.next()
    memory.work.done(item.id, claim=claim.id)
    renamed = memory.work.edit(second.id, expect_rev=second.rev, title="two, renamed")
    assert (renamed.title, renamed.after) == ("two, renamed", (first.id,))


def test_a_claimed_items_paths_and_any_cycle_are_refused(memory: Memory, other: Memory) -> None:
    first = memory.work.add("one", paths=["src/"])
    second = memory.work.add("two", after=[first.id])
    taken, _ = other.work.next()
    with pytest.raises(Refused, match=r"claimed by agent-b .* its paths cannot change"):
        memory.work.edit(taken.id, expect_rev=taken.rev, paths=["docs/"])
    renamed = memory.work.edit(taken.id, expect_rev=taken.rev, title="one, renamed")
    assert (renamed.state, renamed.paths) == ("claimed", ("src/",))
    third = memory.work.add("three", after=[second.id])
    with pytest.raises(Invalid, match=f"{second.id} → {third.id} → {second.id} wait on each"):
        memory.work.edit(second.id, expect_rev=second.rev, after=[first.id, third.id])
    with pytest.raises(Invalid, match=f"{second.id} → {second.id}"):
        memory.work.edit(second.id, expect_rev=second.rev, after=[second.id])
    assert memory.work.show(second.id) == second


def test_add_keeps_ended_items_within_the_bound_but_never_a_dependency(
    memory: Memory, sample: Path
) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "work:\n  keep: 0\n")
    ended = []
    for n in range(4):
        memory.work.add(f"job {n}")
        item, claim = memory.work.next()
        if n == 1:
            memory.work.fail(item.id, "red")
        else:
            memory.work.done(item.id, claim=claim.id)
        ended.append(item.id)
    waiting = memory.work.add("after the failed one", after=[ended[1]])
    kept_done = memory.work.add("after a done one", after=[ended[2]])
    while (added := memory.work.add("filler")).id % TRIM_EVERY:
        assert len(memory.work.list()) == added.id  # nothing dropped before a trim is due
    left = {i.id for i in memory.work.list()}
    assert left & set(ended) == {ended[1], ended[2]}  # depended on: kept beyond the bound
    assert {waiting.id, kept_done.id} <= left
    with pytest.raises(Invalid, match=f"no work item {ended[0]}"):
        memory.work.show(ended[0])
