"""Claims, queued requests and counters in the etcd store (``keys``: ``P/lease/``,
``P/ctr/``). A mixin of ``EtcdStore``.

The lease tables. Claims and queued requests share the prefix ``P/lease/`` (not a ``P/claim/``
and a ``P/wait/`` table of their own) so that ``claim_table()`` — the first read of every lease
operation — is one range and, in a ``writing()`` block, one comparison: a claim or a wait
another block puts (or settles) in the meantime fails it, and so does a drop, since every drop
also changes its table's marker key, which lies inside the range (a deletion alone would pass a
range's comparison). Rows are keyed by id and ordered after reading, as SQLite's ``ORDER BY``:
claims by token, waiters by arrival (the queue's priority order is ``rules.queue_order``'s).
``bump`` reads and writes its counter key in the block, so two stores granting at once conflict
on ``P/ctr/token`` and one retries: tokens strictly increase across every store of the prefix.

Expiry is etcd's (reference §12 "Claims across machines"): a claim's key is held by an etcd
lease of the claim's TTL, so it is there exactly while the claim is live by the clock of
etcd's leader — never by a machine's own clock, which may be minutes off. A copy of the
claim, the grant (``P/lease/grant\0<id>``, no lease), stays until a sweep: a grant whose
claim key has gone is an expired claim (``Claim.alive`` False), dropped with its
``claim.expired`` event by the next lease operation, wherever it runs. A claim key the
transaction read is compared at its commit when a write is fenced by it (``claim_row``): a
lease that ends before the commit fails it, and the write is judged again. Unlike SQLite's
keys, a put of an existing waiter id replaces it, and a second claim with a token already
used is stored, rather than refused: ids and tokens come from ``bump``.
"""

from __future__ import annotations

import json
import math
import os
import time

from memkeeper.store.etcd import codec, recordindex
from memkeeper.store.etcd.core import EtcdCore
from memkeeper.store.etcd.keys import CLAIMS, GRANTS, WAITERS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.clock import Clock


class ClaimKeys(EtcdCore):
    def claim_time(self, clock: Clock) -> float:
        """The wall clock: it dates grants and counts waits, and never ends a claim (etcd's
        leases do). Remembered as this block's time, from which a lease's TTL is counted."""
        self._claims_at = clock.now()
        return self._claims_at

    def bump(self, counter: str) -> int:
        """Add one to a persistent counter and return it: no value is ever handed out twice
        (concurrent bumps read and write one key: one of them retries)."""
        result: int = self._alone(self._bump, counter)
        return result

    def _bump(self, counter: str) -> int:
        key = self._key("ctr", counter)
        last = self._get(key)
        value = 1 if last is None else int(last) + 1
        self._put(key, str(value).encode())
        return value

    def any_live_claim(self, now: Callable[[], float]) -> bool:
        """The cheap question a patch asks before loading any claim (the claims' time,
        ``now``, asked only when a claim is stored)."""
        claims = self._lease_rows("")[0]
        if not claims:
            return False
        at = now()
        return any(c.is_live(at) for c in claims)

    def claim_rows(self, expired_by: float | None = None) -> list[Claim]:
        """Every stored claim (expired ones stay until swept), or those expired by then, in
        token order: live while their key is there, whatever ``expired_by`` says."""
        claims = self._lease_rows("")[0]
        return [c for c in claims if expired_by is None or not c.is_live(expired_by)]

    def claim_row(self, claim_id: str) -> Claim | None:
        """One claim. Its key is compared at the block's commit: a claim that ends (its lease
        runs out) before then fails the block, which a fenced write is judged again by."""
        raw = self._get(self._key("lease", CLAIMS, claim_id))
        if raw is not None:
            return codec.claim(claim_id, raw, alive=_leased_row(raw))
        grant = self._get(self._key("lease", GRANTS, claim_id))
        return None if grant is None else codec.claim(claim_id, grant, alive=False)

    def claim_table(self) -> tuple[list[Claim], list[WaiterRow]]:
        """Every stored claim (token order) and every queued request (arrival order), in one
        range: each lease operation starts by reading both."""
        return self._lease_rows("")

    def _lease_rows(self, table: str) -> tuple[list[Claim], list[WaiterRow]]:
        """The claims and the waiters under ``P/lease/`` (only the waiters with ``table``
        ``WAITERS``): each claim whose key is there, alive; each grant whose claim key has
        gone (its lease ended), expired."""
        prefix = self._key("lease", WAITERS, "") if table == WAITERS else self._key("lease", "")
        live: dict[str, Claim] = {}
        granted: dict[str, bytes] = {}
        waiters = []
        for key, raw in self._scan_prefix(prefix):
            kind, _, ident = key[len(self.prefix) + len(b"lease/") :].decode().partition("\0")
            if not ident:  # a table's drop marker
                continue
            if kind == CLAIMS:
                live[ident] = codec.claim(ident, raw, alive=_leased_row(raw))
            elif kind == GRANTS:
                granted[ident] = raw
            elif kind == WAITERS:
                waiters.append(codec.waiter(ident, raw))
        ended = [
            codec.claim(ident, raw, alive=False)
            for ident, raw in granted.items()
            if ident not in live
        ]
        claims = sorted([*live.values(), *ended], key=lambda c: c.token)
        waiters.sort(key=lambda w: w.request.arrival)
        return claims, waiters

    def put_claim(self, c: Claim) -> None:
        """Insert or replace claim ``c.id`` (its token is not checked for uniqueness: tokens
        come from ``bump``), its key held by an etcd lease (``_leased``), its grant beside."""
        self._alone(self._put_claim, c)

    def _put_claim(self, c: Claim) -> None:
        key = self._key("lease", CLAIMS, c.id)
        lease, granted = self._leased(key, c)
        assert self._txn is not None
        value = codec.claim_json(c, lease, granted)
        self._txn.put(key, value, lease)
        self._txn.put(self._key("lease", GRANTS, c.id), value)

    def _leased(self, key: bytes, c: Claim) -> tuple[int, int]:
        """The etcd lease that holds claim ``c``'s key, and its TTL: from this block's time
        (``claim_time``; else the grant's) to ``c.expires_at``, in whole seconds rounded up
        (etcd may lengthen a short one: its minimum is ~2 s). etcd ends the claim when it
        runs out, by its own clock. A renewal for the lease's own TTL is a keep-alive (etcd
        counts it again from now); any other takes a new lease and revokes the old one once
        the transaction has committed."""
        assert self._txn is not None
        start = c.granted_at if self._claims_at is None else self._claims_at
        want = max(1, math.ceil(c.expires_at - start - 1e-6))
        txn = self._txn
        # The row as this block left it, else as read (a lease operation read the claims).
        raw = txn.writes[key] if key in txn.writes else txn.cache.get(key)
        held = codec.claim_lease(raw) if raw is not None else None
        if held is not None and held[0] in self._after_commit:
            held = None  # a lease this block gives up: never the one to hold the key again
        with self._talking():
            if held is not None and held[1] == want and self.gateway.keepalive(held[0]) > 0:
                return held
            lease, granted = self.gateway.grant(want)
        if held is not None:
            self._after_commit.append(held[0])
        return lease, granted

    def drop_claim(self, claim_id: str) -> None:
        """Forget claim ``claim_id``; its etcd lease is revoked once that has committed."""
        self._alone(self._drop_claim, claim_id)

    def _drop_claim(self, claim_id: str) -> None:
        key = self._key("lease", CLAIMS, claim_id)
        raw = self._get(key)
        held = codec.claim_lease(raw) if raw is not None else None
        if held is not None:
            self._after_commit.append(held[0])
        self._delete(self._key("lease", GRANTS, claim_id))
        self._drop_lease_row(CLAIMS, claim_id)

    def _drop_lease_row(self, table: str, ident: str) -> None:
        self._delete(self._key("lease", table, ident))
        marker = self._key("lease", table, "")
        self._put(marker, os.urandom(8).hex().encode())

    def earliest_expiry(self, now: float) -> float | None:
        """When to sweep next: the soonest ``expires_at`` after ``now`` of the live claims —
        ``now`` for a claim etcd has ended, a second from now for one still live past its
        ``expires_at`` by this clock (etcd's leases decide); None: no claim."""
        claims = self._lease_rows("")[0]
        found = [max(c.expires_at, now + 1.0) if c.alive else now for c in claims]
        return min(found, default=None)

    def put_waiter(self, w: WaiterRow) -> None:
        """Queue a request (ids come from ``bump``: a row of the same id is replaced, where
        SQLite's primary key would refuse it). Its key is held by an etcd lease that ends
        ``ABANDON_GRACE_S`` after the wait's deadline, by etcd's clock: a waiter gone, on any
        machine, leaves no row for longer, and no machine's wall clock judges another's."""
        self._alone(self._put_waiter, w)

    def _put_waiter(self, w: WaiterRow) -> None:
        from memkeeper.claims.waiters import ABANDON_GRACE_S

        start = time.time() if self._claims_at is None else self._claims_at
        ttl = max(1, math.ceil(w.deadline - start + ABANDON_GRACE_S))
        with self._talking():
            lease = self.gateway.grant(ttl)[0]
        assert self._txn is not None
        key = self._key("lease", WAITERS, w.request.id)
        self._txn.put(key, codec.waiter_json(w, lease), lease)

    def waiter_rows(self) -> list[WaiterRow]:
        """Every queued request, in arrival order."""
        return self._lease_rows(WAITERS)[1]

    def settle_waiter(self, request_id: str, state: str, reason: str | None = None) -> None:
        """Record a queued request's outcome (none: nothing happens)."""
        self._alone(self._settle_waiter, request_id, state, reason)

    def _settle_waiter(self, request_id: str, state: str, reason: str | None) -> None:
        key = self._key("lease", WAITERS, request_id)
        raw = self._get(key)
        if raw is not None:
            settled = codec.waiter(request_id, raw)._replace(state=state, reason=reason)
            lease = codec.waiter_lease(raw)  # still held by it
            assert self._txn is not None
            self._txn.put(key, codec.waiter_json(settled, lease), lease)

    def drop_waiter(self, request_id: str) -> None:
        self._alone(self._drop_waiter, request_id)

    def _drop_waiter(self, request_id: str) -> None:
        raw = self._get(self._key("lease", WAITERS, request_id))
        if raw is not None and codec.waiter_lease(raw):
            self._after_commit.append(codec.waiter_lease(raw))
        self._drop_lease_row(WAITERS, request_id)

    def wake_waiters(self, request_ids: Sequence[str]) -> None:
        """Put a wake key for each of those queued requests (``P/wake/<id>``, a fresh random
        value) in this block, held by the lease of the request's row, so that it goes with
        the row: the waiter's watch on its key (``wakewatch``), on whatever machine it runs,
        sees the change once the block commits. Outside the lease range: a wake-up never
        fails another lease operation's comparison."""
        for request_id in request_ids:
            self._alone(self._wake_waiter, request_id)

    def _wake_waiter(self, request_id: str) -> None:
        raw = self._get(self._key("lease", WAITERS, request_id))  # read with the table
        if raw is not None:
            assert self._txn is not None
            wake = self._key("wake", request_id)
            self._txn.put(wake, os.urandom(8).hex().encode(), codec.waiter_lease(raw))

    def put_claim_record(self, r: ClaimRecord) -> None:
        """Insert or replace the record of claim ``r.id`` (``P/crec/<id>``, outside the lease
        range: the records never weigh on a lease operation's first read), and its entry in
        the index by state (``recordindex``)."""
        body = json.dumps(r.to_json(), separators=(",", ":")).encode()
        self._alone(self._put_claim_record, r.id, r.state, body)

    def _put_claim_record(self, id: str, state: str, body: bytes) -> None:
        key = self._key("crec", id)
        was = self._get(key)  # read already where the record was (``record_of``): no request
        self._put(key, body)
        self._put(recordindex.key(self.prefix, state, id), body)
        if was is not None and recordindex.state_of(was) != state:
            self._delete(recordindex.key(self.prefix, recordindex.state_of(was), id))

    def add_claim_record(self, id: str, state: str, agent: str, rev: int, body: str) -> bool:
        """Put a record given as its JSON text (``ClaimRecord.to_json()``'s; kept compact, as
        ``put_claim_record`` keeps it) unless claim ``id`` has one: whether it was written."""
        return bool(self._alone(self._add_claim_record, id, state, body))

    def _add_claim_record(self, id: str, state: str, body: str) -> bool:
        key = self._key("crec", id)
        if self._get(key) is not None:
            return False
        compact = json.dumps(json.loads(body), separators=(",", ":")).encode()
        self._put(key, compact)
        self._put(recordindex.key(self.prefix, state, id), compact)
        return True

    def claim_record(self, claim_id: str) -> ClaimRecord | None:
        raw = self._get(self._key("crec", claim_id))
        return None if raw is None else _record(raw)

    def claim_records(self, states: Sequence[str] = ()) -> list[ClaimRecord]:
        """The records in those states (none named: all), oldest grant first: one range of
        the index per state named, else every record."""
        if not states:
            found = [_record(raw) for _, raw in self._scan_prefix(self._key("crec", ""))]
        else:
            ranges = [recordindex.key(self.prefix, state, "") for state in dict.fromkeys(states)]
            found = [_record(raw) for start in ranges for _, raw in self._scan_prefix(start)]
        kept = [r for r in found if not states or r.state in states]
        return sorted(kept, key=lambda r: (r.granted_at, r.token))


def _record(raw: bytes) -> ClaimRecord:
    from memkeeper.claims.lifecycle import ClaimRecord  # not on the read/patch path

    return ClaimRecord.from_json(json.loads(raw))


def _leased_row(raw: bytes) -> bool | None:
    """A claim key is live while it is there — unless it was stored before claims had leases
    (nothing would ever delete it): that one is judged by the clock."""
    return True if codec.claim_lease(raw) is not None else None
