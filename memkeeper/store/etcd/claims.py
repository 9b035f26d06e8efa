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
Expiry is as in SQLite: a claim carries ``expires_at`` and memkeeper's claims code sweeps what
its clock says is due; each claim's key is also held by an etcd lease (``_leased``), so that it
goes by itself once nobody renews it. Unlike SQLite's keys, a put of an existing waiter id
replaces it, and a second claim with a token already used is stored, rather than refused: ids
and tokens come from ``bump``.
"""

from __future__ import annotations

import math
import os

from memkeeper.store.etcd import codec
from memkeeper.store.etcd.core import EtcdCore
from memkeeper.store.etcd.keys import CLAIMS, WAITERS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow

LEASE_GRACE_S = 2.0  # a claim's etcd lease outlives its expires_at by this much


class ClaimKeys(EtcdCore):
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

    def any_live_claim(self, now: float) -> bool:
        """The cheap question a patch asks before loading any claim."""
        return any(c.expires_at > now for c in self._lease_rows(CLAIMS)[0])

    def claim_rows(self, expired_by: float | None = None) -> list[Claim]:
        """Every stored claim (expired ones stay until swept), or those expired by then, in
        token order."""
        claims = self._lease_rows(CLAIMS)[0]
        return [c for c in claims if expired_by is None or c.expires_at <= expired_by]

    def claim_row(self, claim_id: str) -> Claim | None:
        raw = self._get(self._key("lease", CLAIMS, claim_id))
        return None if raw is None else codec.claim(claim_id, raw)

    def claim_table(self) -> tuple[list[Claim], list[WaiterRow]]:
        """Every stored claim (token order) and every queued request (arrival order), in one
        range: each lease operation starts by reading both."""
        return self._lease_rows("")

    def _lease_rows(self, table: str) -> tuple[list[Claim], list[WaiterRow]]:
        """The claims and the waiters under ``P/lease/`` (only ``table``'s, when given)."""
        prefix = self._key("lease", table, "") if table else self._key("lease", "")
        claims, waiters = [], []
        for key, raw in self._scan_prefix(prefix):
            kind, _, ident = key[len(self.prefix) + len(b"lease/") :].decode().partition("\0")
            if not ident:  # a table's drop marker
                continue
            if kind == CLAIMS:
                claims.append(codec.claim(ident, raw))
            elif kind == WAITERS:
                waiters.append(codec.waiter(ident, raw))
        claims.sort(key=lambda c: c.token)
        waiters.sort(key=lambda w: w.request.arrival)
        return claims, waiters

    def put_claim(self, c: Claim) -> None:
        """Insert or replace claim ``c.id`` (its token is not checked for uniqueness: tokens
        come from ``bump``), its key held by an etcd lease (``_leased``)."""
        self._alone(self._put_claim, c)

    def _put_claim(self, c: Claim) -> None:
        key = self._key("lease", CLAIMS, c.id)
        lease, granted = self._leased(key, c)
        assert self._txn is not None
        self._txn.put(key, codec.claim_json(c, lease, granted), lease)

    def _leased(self, key: bytes, c: Claim) -> tuple[int, int]:
        """The etcd lease that holds claim ``c``'s key, and its TTL: the claim's own (from
        its grant to its expiry, whatever the clock memkeeper runs on) plus ``LEASE_GRACE_S``.
        memkeeper's sweeps expire a claim at its ``expires_at``, with a ``claim.expired``
        event; the lease removes the key even where no memkeeper runs any more (a fleet whose
        every machine died). A renewal within the lease's TTL is a keep-alive; a longer one
        takes a new lease and revokes the old one once the transaction has committed."""
        assert self._txn is not None
        want = max(1, math.ceil(c.expires_at - c.granted_at + LEASE_GRACE_S))
        txn = self._txn
        # The row as this block left it, else as read (a lease operation read the claims).
        raw = txn.writes[key] if key in txn.writes else txn.cache.get(key)
        held = codec.claim_lease(raw) if raw is not None else None
        if held is not None and held[0] in self._after_commit:
            held = None  # a lease this block gives up: never the one to hold the key again
        with self._talking():
            if held is not None and held[1] >= want and self.gateway.keepalive(held[0]) > 0:
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
        self._drop_lease_row(CLAIMS, claim_id)

    def _drop_lease_row(self, table: str, ident: str) -> None:
        self._delete(self._key("lease", table, ident))
        marker = self._key("lease", table, "")
        self._put(marker, os.urandom(8).hex().encode())

    def earliest_expiry(self, now: float) -> float | None:
        """The soonest ``expires_at`` after ``now`` of the stored claims; None: none."""
        found = [c.expires_at for c in self._lease_rows(CLAIMS)[0] if c.expires_at > now]
        return min(found, default=None)

    def put_waiter(self, w: WaiterRow) -> None:
        """Queue a request (ids come from ``bump``: a row of the same id is replaced, where
        SQLite's primary key would refuse it)."""
        self._alone(self._put, self._key("lease", WAITERS, w.request.id), codec.waiter_json(w))

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
            self._put(key, codec.waiter_json(settled))

    def drop_waiter(self, request_id: str) -> None:
        self._alone(self._drop_lease_row, WAITERS, request_id)
