"""Waiting for a claim: the wait itself and its timing.

A request that cannot be granted and may wait is queued (``ClaimTable``), and its process
blocks on its FIFO (``fs.wakeups.Inbox``) between looks at the table: a poke wakes it when a
change concerns it (``claims.wakeups``) — from another machine, through a watch on its wake
key (``store.etcd.wakewatch``) — else it looks again at the soonest of its deadline, the
expiry of what stops it and a cap (a backstop: a poke can be lost, a watch re-opened). A
wait whose process is gone, or that is far past its deadline, is dropped by whoever looks
next.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, Protocol

from memkeeper.claims import decisions as rules
from memkeeper.claims.waiters import ABANDON_GRACE_S
from memkeeper.claims.wording import busy_message, holder_json
from memkeeper.errors import Busy
from memkeeper.fs import processes
from memkeeper.ops.posting import overlaps

__all__ = ["ABANDON_GRACE_S"]  # (and the functions below)

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.clock import Clock
    from memkeeper.errors import BusyReason
    from memkeeper.fs.wakeups import Inbox
    from memkeeper.ops.workspace import Workspace


class Cancel(Protocol):
    """Anything with ``is_set()`` (a ``threading.Event``): set, a wait gives up its place."""

    def is_set(self) -> bool: ...


class WaitCancelled(Exception):
    """A wait for a claim was cancelled by its caller; it left the queue."""


CANCEL_POLL_S = 0.05  # a cancellable wait looks at its cancel flag this often
WAKE_CAP_S = 5.0  # a waiter re-checks at least this often, in case a poke was lost
SHARED_CAP_S = 1.0  # … and this often with etcd, whose watch wakes it from any machine
SHARED_POLL_S = 0.1  # … or this often while etcd has not yet ended a claim past its expiry
_SLACK_S = 0.005  # wake just after an expiry, not just before it


def wait_for(
    request_id: str,
    step: Callable[[], Claim | Busy | float],
    inbox: Inbox,
    cancel: Cancel | None,
    *,
    first: float | None = None,
) -> Claim | Busy:
    """Look at the table (``step``: the outcome, or how long to sleep) until the wait has an
    outcome, blocking on ``inbox`` between looks; ``WaitCancelled`` once ``cancel`` is set
    (looked at every ``CANCEL_POLL_S``). ``first``: how long to sleep before the first look
    (the one that queued the request looked already)."""
    outcome: Claim | Busy | float = step() if first is None else first
    while isinstance(outcome, float):
        if cancel is not None and cancel.is_set():
            raise WaitCancelled(f"{request_id}: the wait was cancelled")
        inbox.block(outcome if cancel is None else min(outcome, CANCEL_POLL_S))
        outcome = step()
    return outcome


def next_look(deadline: float, held: Iterable[Claim], now: float, *, shared: bool) -> float:
    """How long a waiter sleeps before looking again: until its deadline, the soonest expiry
    of the live claims ``held`` or the cap, whichever comes first (just after it). A claim
    still live past its expiry (etcd's lease has not ended it yet) is looked at again every
    ``SHARED_POLL_S``."""
    soonest = min((c.expires_at for c in held if c.expires_at > now), default=float("inf"))
    overdue = shared and any(c.expires_at <= now for c in held)
    cap = SHARED_POLL_S if overdue else SHARED_CAP_S if shared else WAKE_CAP_S
    return min(deadline, soonest, now + cap) - now + _SLACK_S


def horizon(now: float, shared: bool) -> float:
    """By when every waiter looks again anyway, at the latest (``next_look``'s cap): a
    change need not wake one for an expiry after it. With a shared store, none: another
    machine's waiter counts from its own clock."""
    return now if shared else now + WAKE_CAP_S


@contextlib.contextmanager
def watching(ws: Workspace, inbox: Inbox, request_id: str | None) -> Iterator[None]:
    """With a shared store, wake ``inbox`` from any machine while the block runs: at a change
    of request ``request_id``'s wake key, or (None: a work waiter) of the work items or the
    live claims (``store.etcd.wakewatch``). Made before the block's first look."""
    if not ws.shared:
        yield
        return
    from memkeeper.store.etcd import EtcdStore, wakewatch

    store = ws.store
    assert isinstance(store, EtcdStore)
    if request_id is None:
        watch = wakewatch.work_wait(store, inbox.poke)
    else:
        watch = wakewatch.claim_wait(store, request_id, inbox.poke)
    try:
        yield
    finally:
        watch.close()


def queued(
    ws: Workspace,
    request: Request,
    wait: float,
    held: Iterable[Claim],
    waiting: Collection[str],
) -> None:
    """Record ``claim.queued`` (inside the queuing transaction): who now waits on whom of the
    ``held`` claims, paired with ``claim.granted`` or ``.aborted`` of the same id by the
    contention audit; and tell each holder who waits behind it (``waiting``: the requests
    queued now, this one among them)."""
    data: dict[str, Any] = {"id": request.id, "mode": request.mode}
    data |= {"targets": list(request.targets), "priority": request.priority, "wait_s": wait}
    blocking = rules.blockers(held, request)
    data["waiting_on"] = [{"id": c.id, "agent": c.agent} for c in blocking]
    ws.record("claim.queued", None, None, data, request.agent)
    overlaps(ws, request, blocking, waiting)


def busy(
    request: Request,
    live: tuple[Claim, ...],
    queued: tuple[Request, ...],
    now: float,
    reason: BusyReason,
) -> Busy:
    """The answer to ``request`` when it is not granted now (``reason``): who holds what it
    asks for, and who waits ahead of it."""
    holders = rules.blockers(live, request)
    ahead = [w for w in rules.waiters_ahead(live, queued, request) if w.id != request.id]
    return Busy(
        busy_message(request, reason, holders, ahead, now),
        reason=reason,
        id=request.id,
        holders=[holder_json(c, now) for c in holders],
        waiters=[{"id": w.id, "agent": w.agent, "priority": w.priority} for w in ahead],
    )


def busy_reason(row: WaiterRow | None) -> BusyReason:
    """Why a wait ended without a grant: aborted to break a deadlock (the only reason the
    queue records), else it timed out."""
    return "deadlock" if row is not None and row.reason == "deadlock" else "timeout"


def abandoned(row: WaiterRow, now: float, *, shared: bool = False) -> bool:
    """Whether nobody is left to collect this wait: far past its deadline, or its process
    (another one) is gone. With a shared store, a wait's deadline is its waiter's wall clock,
    which no other machine's (nor process's) can judge: etcd ends the row by its own clock
    instead (its lease, ``ABANDON_GRACE_S`` past the deadline)."""
    if not shared and now > row.deadline + ABANDON_GRACE_S:
        return True
    return row.pid != os.getpid() and not processes.pid_alive(row.pid)


# When each wait of this process ends, on its clock's uptime (``Clock.since_boot``).
_ENDS: dict[str, float] = {}


def waits_until(request_id: str, wait: float, clock: Clock) -> None:
    """Remember when this process's wait ``request_id`` ends: ``wait`` seconds from now on
    the uptime, which no step of the wall clock moves (NTP's, a user's, libfaketime's)."""
    _ENDS[request_id] = clock.since_boot()[1] + wait


def time_left(row: WaiterRow | None, now: float, clock: Clock) -> float:
    """Seconds left of the wait ``row`` (0: none left, or it is not waiting): this process's
    own by the uptime (``waits_until``), another's by its row's deadline against ``now``."""
    if row is None or row.state != "waiting":
        return 0.0
    end = _ENDS.get(row.request.id)
    return row.deadline - now if end is None else end - clock.since_boot()[1]
