"""``Memory.work``, the sub-façade over ``ops.work``: every verb reachable from a ``Memory``,
as the identity it acts as."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper import Memory
from memkeeper.workqueue import Work

if TYPE_CHECKING:
    from pathlib import Path


def test_memory_work_adds_takes_and_ends_items_as_its_agent(sample: Path) -> None:
    with_a = Memory.open(sample, agent="a")
    try:
        assert isinstance(with_a.work, Work)
        with_a.work.add("one", paths=["src/"])
        with_a.work.add("two", after=[1])
        assert [i.id for i in with_a.work.list(ready=True)] == [1]
        item, claim = with_a.work.next(ttl=60)
        assert (item.agent, claim.agent) == ("a", "a")
        assert with_a.work.done(1, claim=claim.id).state == "done"
        assert with_a.work.next()[0].id == 2
        assert with_a.work.give_back(2).state == "open"
        with_a.work.next()
        assert with_a.work.fail(2, "no").state == "failed"
        assert with_a.work.wait(2, 0).state == "failed"
        assert with_a.work.show(1).state == "done"
    finally:
        with_a.close()
