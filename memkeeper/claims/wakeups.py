"""Which waiters a change of the claim table concerns (issue 26). Pure.

A queued request's process sleeps between looks at the table; at each look it learns what it
waits for (``View``): the state of its row (``waiting``, ``granted``, ``aborted``), whether it
is at the front of the queue (no conflicting waiter is served before it) and, at the front,
the soonest expiry of the live claims that stop it. It sleeps until the soonest of that
expiry, its deadline and its cap (``now + cap``): only an expiry can let it in without a
change somebody else makes, and a waiter behind another has nothing to time — its turn comes
when the one ahead is served or leaves.

So a change concerns a waiter when it changes its row's state (granted, aborted), or when it
puts the waiter at the front, or gives it a sooner expiry there, before the waiter would
look anyway: the soonest expiry now earlier than the one it sleeps until and than the
``horizon`` (the writer's time plus the waiter's cap; the waiter looked no later than the
writer's now, so it looks again by then). Waking any other waiter would have it look, find
nothing to do and sleep again: the writer wakes only the concerned ones (``concerned``), so a
release costs a constant number of looks whatever the length of the queue.
"""

from __future__ import annotations

from memkeeper.claims import decisions as rules
from memkeeper.claims.ahead import Ahead

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow

# (state, at the front, the soonest expiry of what stops it there: inf elsewhere)
View = tuple[str, bool, float]
_NONE = float("inf")


def views(live: Sequence[Claim], rows: Sequence[WaiterRow]) -> dict[str, View]:
    """Each queued request's ``View`` of the table (``live`` claims, queue ``rows``)."""
    found: dict[str, View] = {
        w.request.id: (w.state, False, _NONE) for w in rows if w.state != "waiting"
    }
    held = tuple(live)
    waiting = tuple(w.request for w in rows if w.state == "waiting")
    ahead = Ahead()
    for request in rules.queue_order(held, waiting) if waiting else ():
        if ahead.blocks(request):
            found[request.id] = ("waiting", False, _NONE)
        else:
            stops = rules.blockers(held, request)
            found[request.id] = ("waiting", True, min((c.expires_at for c in stops), default=_NONE))
        ahead.add(request)
    return found


def concerned(before: Mapping[str, View], after: Mapping[str, View], horizon: float) -> list[str]:
    """The requests a change from ``before`` to ``after`` concerns, in ``after``'s order;
    ``horizon``: when every waiter looks again anyway. Those the change queued are left out:
    their own process looks right after queuing them."""
    found = []
    for rid, (state, _, soonest) in after.items():
        was = before.get(rid)
        if was is not None and (state != was[0] or soonest < min(was[2], horizon)):
            found.append(rid)
    return found


def woken(
    before: tuple[Sequence[Claim], Sequence[WaiterRow]],
    live: Sequence[Claim],
    rows: Sequence[WaiterRow],
    horizon: float,
    me: str | None,
) -> list[str]:
    """Whom a transaction wakes: the requests other than ``me`` (the caller's own, which
    looks anyway) that its change from ``before`` (claims and rows as it read them) to
    ``live`` and ``rows`` concerns."""
    if not rows:
        return []
    moved = concerned(views(*before), views(live, rows), horizon)
    return [rid for rid in moved if rid != me]


def timed(live: Sequence[Claim], rows: Sequence[WaiterRow], request_id: str) -> list[Claim]:
    """The live claims whose expiry waiter ``request_id`` times its next look by: those
    that stop it while it is at the front, else none."""
    view = views(live, rows).get(request_id)
    if view is None or not view[1]:
        return []
    request = next(w.request for w in rows if w.request.id == request_id)
    return list(rules.blockers(tuple(live), request))
