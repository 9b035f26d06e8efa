"""Claims (docs/reference.md §4): the shell that stores what the rules decide, and wakes waiters.

Every operation is one ``writing()`` transaction that reads the claims and the queue once,
settles them — expired claims go, each leaving ``claim.expired``; waits whose process is gone
go too — then acts, then serves the queue again: it grants each waiter that has become
grantable, in queue order, and aborts deadlock victims (``claim.aborted``, reason
``deadlock``) until neither is left. Every change goes to the store and to the transaction's
copy of the table alike, so no step reads the table twice. It wakes only the waiters a change
concerns (``claims.wakeups``): a wake key each in the transaction (etcd), a byte into each
one's FIFO after the commit (``fs.wakeups``), a serializing meeting's turn handed over first
(``ops.meetingturns``). Fencing tokens come from a counter in the grant's transaction: never
repeated. Records: ``claims.lifecycle``; other verbs: ``ops.claimlife``."""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from memkeeper.claims import decisions as rules
from memkeeper.claims import lifecycle as life
from memkeeper.claims import wakeups
from memkeeper.claims.plan import Plan
from memkeeper.claims.waiters import WaiterRow
from memkeeper.claims.wording import claim_data, ended_error, ttl_warnings
from memkeeper.errors import Busy, Invalid, Refused
from memkeeper.events import iso_utc
from memkeeper.fs import crash
from memkeeper.fs import wakeups as waiting
from memkeeper.ops import claimwaits as waits
from memkeeper.ops import meetingturns as handing
from memkeeper.ops.claimsimilar import overlap_warnings
from memkeeper.ops.claimwrites import resolve_target

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from memkeeper.claims.decisions import Claim, Mode, Request
    from memkeeper.claims.lifecycle import ClaimRecord, State
    from memkeeper.errors import BusyReason
    from memkeeper.ops.workspace import Workspace


T = TypeVar("T")
EMPTY_PLAN = Plan()


def _again(method: Callable[..., T]) -> Callable[..., T]:
    """A ``ClaimTable`` method, run again when another writer got in first (``ws.again``)."""

    @functools.wraps(method)
    def run(self: ClaimTable, *args: Any, **kwargs: Any) -> T:
        return self.ws.again(lambda: method(self, *args, **kwargs))

    return run


class ClaimTable:
    """The claim operations of one ``Memory``; each public call is one transaction."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.store = ws.store
        self.changed = self.freed = False  # freed: a claim left the live set, or shrank
        self.swept: list[Claim] = []
        self.start: tuple[list[Claim], list[WaiterRow]] = ([], [])  # the table as read
        # the transaction's copy of the table, read once at its start (nobody else writes
        # until it commits): the live claims in token order, the queue's rows in arrival order
        self.held: list[Claim] = []
        self.rows: list[WaiterRow] = []
        self.me: str | None = None  # the request this process waits on: it needs no poke

    @functools.cached_property
    def ttls(self) -> tuple[int, int]:
        """The policy's default and maximum TTL, read once an operation needs one (a release
        that lets nobody in never does)."""
        return self.ws.claim_ttls()

    @property
    def default_ttl(self) -> int:
        return self.ttls[0]

    @property
    def max_ttl(self) -> int:
        return self.ttls[1]

    @contextlib.contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[float]:
        """Settle, act, settle. ``Invalid`` or ``Refused`` from the body still commits the
        sweep (bodies check before they write) and is raised after the commit. ``durable``:
        the commit waits for the disk (``Store.writing``) — always where it grants a claim,
        since a fencing token, once answered, must survive a power cut."""
        self.changed, self.freed, failure = False, False, None
        with self.store.writing(durable=durable):
            self.store.prefetch_claims()
            now = self.ws.claim_now()
            self._sweep(now)
            if self.changed:  # else the queue is as the last transaction's serve left it
                self._serve(now, now)
            try:
                yield now
            except (Invalid, Refused) as exc:
                failure = exc
            if self.freed:  # targets were let go: a serializing meeting's turn may be due
                handing.hand_over(self, now)
            pokes = self._serve(now, waits.horizon(now, self.ws.shared)) if self.changed else []
            self.store.wake_waiters(pokes)
        waiting.notify(self.ws.home, pokes)
        if failure is not None:
            raise failure

    # -- operations ------------------------------------------------------------------------

    def claim(
        self,
        targets: Iterable[str],
        *,
        mode: Mode,
        ttl: float | None,
        priority: int,
        strict: bool,
        wait: float | None,
        objective: str,
        cancel: waits.Cancel | None = None,
        plan: Plan | None = None,
    ) -> Claim:
        resolved = [resolve_target(self.ws, target) for target in targets]
        if wait is not None and not wait >= 0:
            raise Invalid(f"--wait must be a number of seconds, not {wait} — pass --wait 30")

        def make(arrival: int) -> Request:
            return rules.make_request(
                f"c{arrival}", self.ws.agent, resolved, mode=mode, priority=priority,
                strict=strict, ttl=self.default_ttl if ttl is None else ttl,
                objective=objective, arrival=arrival, plan=plan,
            )  # fmt: skip

        request, outcome, inbox, first = self.ws.again(lambda: self._begin(make, wait))
        crash.crashpoint("claim.after_commit")
        if inbox is not None:
            outcome = self._wait(request, inbox, cancel, first)
        if isinstance(outcome, Busy):
            raise outcome
        assert outcome is not None
        warnings = ttl_warnings(request.ttl, self.max_ttl)
        warnings += overlap_warnings(self.ws, outcome, self.held)  # never blocks: a warning
        return replace(outcome, warnings=warnings) if warnings else outcome

    def _begin(
        self, make: Callable[[int], Request], wait: float | None
    ) -> tuple[Request, Claim | Busy | None, waiting.Inbox | None, float]:
        """The claim's first transaction: its request (``make`` of its arrival number),
        granted, busy, or queued (with its inbox, and how long it sleeps before its next
        look: this one was its first)."""
        inbox: waiting.Inbox | None = None
        try:
            with self.transaction() as now:
                request = make(self.store.bump("request"))
                outcome: Claim | Busy | None = self._enter(request, now)
                if outcome is None and wait:
                    inbox = waiting.Inbox(self.ws.home, request.id)  # before the row shows
                    self._enqueue(WaiterRow(request, os.getpid(), now + wait, "waiting", None))
                    waits.waits_until(request.id, wait, self.ws.clock)
                    queue = {w.request.id for w in self._waiting()}
                    waits.queued(self.ws, request, wait, self.held, queue)
                    self.changed = True  # a new wait may close a cycle: serve the queue
                elif outcome is None:
                    outcome = self._busy(request, now, "held")
                crash.crashpoint("claim.before_commit")  # granted (or queued), not committed
        except BaseException:
            if inbox is not None:
                inbox.close()
            raise
        first = self._sleep(request.id, now, wait or 0.0) if inbox is not None else 0.0
        return request, outcome, inbox, first  # (first: as the transaction left the table)

    @_again
    def renew(self, claim_id: str, ttl: float | None) -> Claim:
        with self.transaction() as now:
            held = self._find(claim_id)
            ttl = self.default_ttl if ttl is None else ttl
            claim = rules.renew(held, self.ws.agent, ttl, now, self.max_ttl)
            self.store.put_claim(claim)
            self.held = [claim if c.id == claim.id else c for c in self.held]
            self.changed = True  # its expiry moved: a waiter may time its look by it
            self._event("claim.renewed", claim, {"previous_expires_at": iso_utc(held.expires_at)})
        return replace(claim, warnings=ttl_warnings(ttl, self.max_ttl))

    @_again
    def release(self, claim_id: str) -> Claim:
        """Give a claim back, committed without waiting for the disk (lost to a power cut, the
        claim lives to its TTL; a waiter let in is answered after a durable commit)."""
        with self.transaction(durable=False) as now:
            claim = self._find(claim_id)
            rules.check_release(claim, self.ws.agent)
            if not claim.is_live(now):
                raise rules.expired_error(claim, now)
            self._drop(claim, now, None)
        return claim

    @_again
    def live(self) -> tuple[list[Claim], list[WaiterRow], float]:
        """The live claims and the queued requests, after a sweep."""
        with self.transaction() as now:
            return list(self.held), self._waiting(), now

    @_again
    def sweep(self) -> list[Claim]:
        """Expire what is due (the daemon calls this); the claims that expired."""
        with self.transaction():
            return list(self.swept)

    # -- the queue ---------------------------------------------------------------------------

    def _enter(self, request: Request, now: float) -> Claim | None:
        live, queued = self._table()
        return self._grant(request, now) if rules.grantable(live, queued, request) else None

    def _wait(
        self, request: Request, inbox: waiting.Inbox, cancel: waits.Cancel | None, first: float
    ) -> Claim | Busy:
        self.me = request.id
        step = functools.partial(self._step, request)
        try:
            with waits.watching(self.ws, inbox, request.id):
                # a watch comes up after the queuing commit: it looks again once it is up
                again = None if self.ws.shared else first
                return waits.wait_for(request.id, step, inbox, cancel, first=again)
        except BaseException:
            self._forget(request.id)
            raise
        finally:
            inbox.close()

    @_again
    def _step(self, request: Request) -> Claim | Busy | float:
        """Collect the outcome of our wait, or how long to sleep before looking again."""
        with self.transaction() as now:
            row = next((w for w in self.rows if w.request.id == request.id), None)
            if (left := waits.time_left(row, now, self.ws.clock)) > 0:
                return self._sleep(request.id, now, left)
            if row is not None:
                self._unqueue(request.id)
                self.changed |= row.state != "granted"  # a collected grant moves nobody up
            if row is not None and row.state == "waiting":  # its wait ran out
                self._abort(request, "timeout", settle=False)
            if row is not None and row.state == "granted":
                return self._held(request.id) or self._busy(request, now, "expired")
            return self._busy(request, now, waits.busy_reason(row))

    @_again
    def _forget(self, request_id: str) -> None:
        """Leave the queue on an interruption; give back a grant nobody collected."""
        with self.transaction() as now:
            for row in list(self.rows):
                if row.request.id == request_id:
                    self._abandon(row, now, "interrupted")

    def _sleep(self, request_id: str, now: float, left: float) -> float:
        """How long a waiter ``left`` seconds from its deadline sleeps (0: settled)."""
        timed = wakeups.timed(self.held, self.rows, request_id)
        waiting = any(w.request.id == request_id and w.state == "waiting" for w in self.rows)
        return waits.next_look(now + left, timed, now, shared=self.ws.shared) if waiting else 0.0

    def _serve(self, now: float, horizon: float) -> list[str]:
        """Grant what has become grantable and abort deadlock victims until neither is left;
        the other queued requests the transaction concerns (``wakeups.woken``)."""
        while True:
            queued = tuple(w.request for w in self.rows if w.state == "waiting")
            if not queued:  # nobody to grant, no cycle to break
                return wakeups.woken(self.start, self.held, self.rows, horizon, self.me)
            live = tuple(self.held)
            ready = rules.first_grantable(live, queued)
            if ready is not None:
                self._grant(ready, now)
                self._settle(ready.id, "granted")
                continue
            victim = rules.deadlock_victim(live, queued)
            if victim is None:
                return wakeups.woken(self.start, self.held, self.rows, horizon, self.me)
            self._abort(next(r for r in queued if r.id == victim), "deadlock")

    def _sweep(self, now: float) -> None:
        """Read the table (one statement) into this transaction's copy and settle it: expired
        claims go (``swept``), then the waits nobody is left to collect."""
        self.start = (stored, self.rows) = self.store.claim_table()
        self.held = [c for c in stored if c.is_live(now)]
        self.swept = [c for c in stored if not c.is_live(now)]
        for claim in self.swept:
            self._end(claim, now, "expired", {})
        for row in [w for w in self.rows if waits.abandoned(w, now, shared=self.ws.shared)]:
            self._abandon(row, now, "abandoned")
        self.changed |= bool(self.swept)

    def _abandon(self, row: WaiterRow, now: float, why: str) -> None:
        self._unqueue(row.request.id)
        if row.pid != os.getpid():
            waiting.discard(self.ws.home, row.request.id)
        claim = self._held(row.request.id) if row.state == "granted" else None
        if claim is not None:
            self._drop(claim, now, why)
        elif row.state == "waiting":
            self._abort(row.request, why, settle=False)
        self.changed = True

    # -- changes, each with its event ---------------------------------------------------------

    def _grant(self, request: Request, now: float) -> Claim:
        claim = rules.grant(request, self.store.bump("token"), now, self.max_ttl)
        self.store.put_claim(claim)
        self.held.append(claim)  # the highest token yet: the copy stays in token order
        self._event("claim.granted", claim, {"rev": 1})  # its record: written at its first change
        self.changed = True
        return claim

    def _drop(self, claim: Claim, now: float, reason: str | None) -> None:
        self._end(claim, now, "released", {"reason": reason} if reason else {}, reason=reason or "")

    def _end(
        self, claim: Claim, now: float, to: State, extra: dict[str, Any], **changes: Any
    ) -> None:
        """Take ``claim`` out of the live set, its record to ``to`` (a revision on, ``changes``),
        with its event; one never stored (unchanged since the grant) added as JSON, no read."""
        self.store.drop_claim(claim.id)
        self.held = [c for c in self.held if c.id != claim.id]
        at, by, rev = iso_utc(self.ws.now()), self.ws.agent, 2
        fresh = None if set(changes) - {"reason"} else life.ended_body(
            claim, claim.plan or EMPTY_PLAN, iso_utc(claim.granted_at), to, at=at, by=by,
            ended_at=now, **changes,
        )  # fmt: skip
        if fresh is None or not self.store.add_claim_record(claim.id, to, claim.agent, 2, fresh):
            record = life.move(self.record_of(claim), to, at=at, by=by, ended_at=now, **changes)
            self.store.put_claim_record(record)
            rev = record.rev
        data = {"rev": rev, "held_s": round(now - claim.granted_at, 3), **extra}
        self._event(life.EVENTS[to], claim, data)
        self.changed = self.freed = True

    def record_of(self, claim: Claim) -> ClaimRecord:
        """The record of a live claim: as stored (from its first change), else as granted."""
        found = self.store.claim_record(claim.id)
        return found or life.open_record(claim, claim.plan or EMPTY_PLAN, iso_utc(claim.granted_at))

    def _abort(self, request: Request, reason: str, *, settle: bool = True) -> None:
        if settle:
            self._settle(request.id, "aborted", reason)
        data: dict[str, Any] = {"reason": reason, "mode": request.mode}
        data |= {"targets": list(request.targets), "priority": request.priority}
        self.ws.record("claim.aborted", None, None, {"id": request.id, **data}, request.agent)
        self.changed = True

    def _event(self, type: str, claim: Claim, extra: dict[str, Any]) -> None:
        self.ws.record(type, None, None, {**claim_data(claim), **extra}, claim.agent)

    # -- the queue's rows, in the store and in the copy alike ---------------------------------

    def _enqueue(self, row: WaiterRow) -> None:
        self.store.put_waiter(row)
        self.rows = [*self.rows, row]  # the latest arrival yet: still in arrival order

    def _settle(self, request_id: str, state: str, reason: str | None = None) -> None:
        self.store.settle_waiter(request_id, state, reason)
        self.rows = [
            w._replace(state=state, reason=reason) if w.request.id == request_id else w
            for w in self.rows
        ]

    def _unqueue(self, request_id: str) -> None:
        self.store.drop_waiter(request_id)
        self.rows = [w for w in self.rows if w.request.id != request_id]

    # -- reading the table (the transaction's copy) ----------------------------------------------

    def _table(self) -> tuple[tuple[Claim, ...], tuple[Request, ...]]:
        return tuple(self.held), tuple(w.request for w in self._waiting())  # after a sweep

    def _waiting(self) -> list[WaiterRow]:
        return [w for w in self.rows if w.state == "waiting"]

    def _held(self, claim_id: str) -> Claim | None:
        return next((c for c in self.held if c.id == claim_id), None)

    def _find(self, claim_id: str) -> Claim:
        """A stored claim, or one this transaction's sweep just expired; else ``Invalid``."""
        found = self._held(claim_id) or next((c for c in self.swept if c.id == claim_id), None)
        if found is not None:
            return found
        record = self.store.claim_record(claim_id)
        if record is not None and record.state != "active":
            raise ended_error(claim_id, record.state, record.history[-1].at)
        ended = self.store.last_claim_event(claim_id)
        if ended is None:
            raise ended_error(claim_id, None, "")
        raise ended_error(claim_id, ended.type.removeprefix("claim."), ended.ts)

    def _busy(self, request: Request, now: float, reason: BusyReason) -> Busy:
        return waits.busy(request, *self._table(), now, reason)
