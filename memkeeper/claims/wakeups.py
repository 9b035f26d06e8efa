"""Which waiters a change of the claim table concerns (issue 26). Pure.

A queued request's process sleeps between looks at the table; at each look it learns what it
waits for (``View``): the state of its row (``waiting``, ``granted``, ``aborted``), whether it
is at the front of the queue (no conflicting waiter is served before it), and, at the front,
the live claims that stop it, with their expiry — it sleeps until the soonest of those, since
only an expiry can let it in without a change somebody else makes. A waiter behind another
has nothing to time: its turn comes when the one ahead is served or leaves.

So a change concerns a waiter exactly when its ``View`` differs after the change from before
it: granted, aborted, moved to the front, or its blockers changed (one released, renewed,
narrowed, or a new one granted ahead of it). Every other waiter would look, find what it found
last time and sleep again: the writer wakes only the concerned ones (``concerned``), so a
release costs a constant number of looks whatever the length of the queue.
"""

from __future__ import annotations

from memkeeper.claims import decisions as rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow

# (state, at the front, the blockers' (id, expiry) while at the front)
View = tuple[str, bool, frozenset[tuple[str, float]]]


def views(live: Sequence[Claim], rows: Sequence[WaiterRow]) -> dict[str, View]:
    """Each queued request's ``View`` of the table (``live`` claims, queue ``rows``)."""
    found: dict[str, View] = {
        w.request.id: (w.state, False, frozenset()) for w in rows if w.state != "waiting"
    }
    held = tuple(live)
    waiting = tuple(w.request for w in rows if w.state == "waiting")
    order = rules.queue_order(held, waiting) if waiting else ()
    for place, request in enumerate(order):
        if any(rules.conflicts(ahead, request) for ahead in order[:place]):
            found[request.id] = ("waiting", False, frozenset())
            continue
        stops = frozenset((c.id, c.expires_at) for c in rules.blockers(held, request))
        found[request.id] = ("waiting", True, stops)
    return found


def concerned(before: Mapping[str, View], after: Mapping[str, View]) -> list[str]:
    """The requests whose ``View`` a change moved (those it queued are left out: their own
    process looks right after queuing them), in ``after``'s order."""
    return [rid for rid, view in after.items() if rid in before and before[rid] != view]


def woken(
    before: tuple[Sequence[Claim], Sequence[WaiterRow]],
    live: Sequence[Claim],
    rows: Sequence[WaiterRow],
    me: str | None,
) -> list[str]:
    """Whom a transaction wakes: the requests other than ``me`` (the caller's own, which
    looks anyway) whose view of the table it changed from ``before`` (claims and rows as it
    read them) to ``live`` and ``rows``."""
    if not rows:
        return []
    return [rid for rid in concerned(views(*before), views(live, rows)) if rid != me]


def timed(live: Sequence[Claim], rows: Sequence[WaiterRow], request_id: str) -> list[Claim]:
    """The live claims whose expiry waiter ``request_id`` times its next look by: those
    that stop it while it is at the front, else none."""
    view = views(live, rows).get(request_id)
    if view is None or not view[1]:
        return []
    ids = {claim_id for claim_id, _ in view[2]}
    return [c for c in live if c.id in ids]
