"""``ops.workboard``: the queue read in one work transaction — an item whose claim expired is
settled back to the ready list first, as ``work list`` would; done items counted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.ops.workboard import work_board

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents


def test_an_expired_claims_item_is_ready_again_and_done_ones_are_counted(
    agents: Agents, clock: FakeClock
) -> None:
    a = agents("w1")
    for title in ("one", "two", "three"):
        a.work.add(title)
    taken, _ = a.work.next(ttl=30)
    a.work.done(taken.id)
    held, claim = a.work.next(ttl=30)
    got = work_board(a.workspace)
    assert [(w["id"], w["claim"], w["idle"]) for w in got["working"]] == [(held.id, claim.id, None)]
    clock.advance(31)
    got = work_board(a.workspace)
    assert got["working"] == []
    assert [r["id"] for r in got["ready"]] == [held.id, 3]
    assert got["counts"] == {
        "open": 2,
        "claimed": 0,
        "ready": 2,
        "done": 1,
        "failed": 0,
        "blocked": 0,
    }
