"""Which waiters a change of the claim table concerns (``claims.wakeups``): the one it
grants or aborts, and one it puts at the front of the queue (or gives a sooner expiry there)
before that one would look anyway — never the rest of the queue."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims import decisions as rules
from memkeeper.claims import wakeups
from memkeeper.claims.waiters import WaiterRow

if TYPE_CHECKING:
    from memkeeper.claims.decisions import Claim, Mode, Request

NOW = 1_700_000_000.0
CAP = 5.0


def holding(agent: str, target: str, expires_in: float, token: int = 1) -> Claim:
    request = rules.make_request(f"h{token}", agent, [target], ttl=expires_in, arrival=0)
    return rules.grant(request, token, NOW, 3600)


def asking(n: int, target: str = "src/", *, priority: int = 0, mode: Mode = "write") -> Request:
    return rules.make_request(
        f"c{n}", f"agent-{n}", [target], mode=mode, priority=priority, ttl=600, arrival=n
    )


def row(request: Request, state: str = "waiting") -> WaiterRow:
    return WaiterRow(request, 4242, NOW + 60, state, None)


def test_only_the_front_of_the_queue_times_an_expiry() -> None:
    held = holding("a", "src/", 30)
    rows = [row(asking(1)), row(asking(2)), row(asking(3, "docs/"))]
    views = wakeups.views([held], rows)
    assert views == {
        "c1": ("waiting", True, NOW + 30),
        "c2": ("waiting", False, math.inf),  # behind c1: its turn comes when c1 is served
        "c3": ("waiting", True, math.inf),  # stopped by nothing: the serve grants it
    }
    assert wakeups.timed([held], rows, "c1") == [held]
    assert wakeups.timed([held], rows, "c2") == []


def test_a_release_concerns_the_waiter_it_grants_not_the_queue_behind() -> None:
    held = holding("a", "src/", 30)
    queue = [row(asking(n)) for n in range(1, 33)]
    granted = holding("agent-1", "src/", 600, token=2)
    after = [row(queue[0].request, "granted"), *queue[1:]]
    woken = wakeups.woken(([held], queue), [granted], after, NOW + CAP, None)
    assert woken == ["c1"]  # c2 is at the front now, behind a claim of ten minutes


def test_a_new_front_is_woken_when_what_stops_it_expires_before_its_next_look() -> None:
    held = holding("a", "src/", 30)
    queue = [row(asking(1)), row(asking(2))]
    soon = holding("agent-1", "src/", 2, token=2)
    after = [row(queue[0].request, "granted"), queue[1]]
    assert wakeups.woken(([held], queue), [soon], after, NOW + CAP, None) == ["c1", "c2"]
    assert wakeups.woken(([held], queue), [soon], after, NOW + CAP, "c1") == ["c2"]  # me


def test_a_renewal_that_brings_an_expiry_closer_wakes_the_front_only() -> None:
    held = holding("a", "src/", 30)
    queue = [row(asking(1)), row(asking(2))]
    shorter = holding("a", "src/", 1)
    assert wakeups.woken(([held], queue), [shorter], queue, NOW + CAP, None) == ["c1"]
    longer = holding("a", "src/", 300)  # it wakes at the old expiry, early: harmless
    assert wakeups.woken(([held], queue), [longer], queue, NOW + CAP, None) == []


def test_a_waiter_the_change_queued_is_left_to_its_own_look() -> None:
    held = holding("a", "src/", 30)
    assert wakeups.woken(([held], []), [held], [row(asking(1))], NOW + CAP, None) == []


def test_an_abort_concerns_its_waiter() -> None:
    held = holding("a", "src/", 30)
    queue = [row(asking(1))]
    aborted = [queue[0]._replace(state="aborted", reason="deadlock")]
    assert wakeups.woken(([held], queue), [held], aborted, NOW + CAP, None) == ["c1"]


TARGETS = st.sampled_from(["src/", "src/a.py", "docs/", "docs/x.md", "**"])
CLAIMS = st.lists(
    st.tuples(st.sampled_from("abcd"), TARGETS, st.sampled_from([1.0, 4.0, 30.0, 600.0])),
    max_size=3,
)
REQUESTS = st.lists(
    st.tuples(TARGETS, st.integers(0, 2), st.sampled_from(["read", "write"])),
    max_size=8,
)


@given(claims=CLAIMS, requests=REQUESTS, drop=st.integers(0, 3))
def test_a_waiter_not_woken_by_a_release_finds_nothing_to_do_before_its_next_look(
    claims: list[tuple[str, str, float]], requests: list[tuple[str, int, Mode]], drop: int
) -> None:
    """Release a claim and serve the queue (grant whoever can go, in its order): every
    waiter not woken keeps its row's state, and what stops it at the front of the queue
    expires no sooner than it looks again — at its last expiry or at its cap."""
    live = [holding(agent, target, ttl, token=n) for n, (agent, target, ttl) in enumerate(claims)]
    asked = [asking(n, t, priority=p, mode=m) for n, (t, p, m) in enumerate(requests, 1)]
    queued = tuple(r for r in asked if not rules.grantable(tuple(live), (), r))
    before = [row(r) for r in queued]
    after_live = [c for n, c in enumerate(live) if n != drop]
    after, waiting = list(before), list(queued)
    while (ready := rules.first_grantable(tuple(after_live), tuple(waiting))) is not None:
        after_live.append(rules.grant(ready, 100 + len(after_live), NOW, 3600))
        after = [w._replace(state="granted") if w.request.id == ready.id else w for w in after]
        waiting.remove(ready)
    woken = set(wakeups.woken((live, before), after_live, after, NOW + CAP, None))
    was, now = wakeups.views(live, before), wakeups.views(after_live, after)
    for rid in set(now) - woken:
        state, front, soonest = now[rid]
        assert state == was[rid][0] == "waiting"
        look = min(was[rid][2], NOW + CAP)  # when it looks again at the latest
        assert not front or soonest >= look
