"""The claim tables of the SQLite store: claims, queued requests and counters, and the
claims' clock (``claims.epoch``: this machine's uptime from the boot's epoch, kept in the
cache table).

A mixin of ``Store`` (it shares the one connection and its transactions); every SQL statement
about claims lives here. Call the writing methods inside ``Store.writing()``.
"""

from __future__ import annotations

import functools
import json

from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.claims.plan import Plan
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.clock import Clock


class ClaimRows(SqliteCore):
    def claim_time(self, clock: Clock) -> float:
        """The time claims are judged by: this boot's epoch plus the machine's uptime, the
        same for every process however its wall clock is set. The first look of a boot keeps
        its epoch (in the open transaction, else in one of its own) and ends every claim and
        wait of an earlier boot at that moment."""
        # A read never asks, nor a patch where nobody claims (``any_live_claim``).
        from memkeeper.claims import epoch as epochs

        boot, uptime = clock.since_boot()
        kept = epochs.decode(self.cached(epochs.EPOCH_KEY))
        now, epoch = epochs.claim_time(kept, boot, uptime, clock.now())
        if epoch is kept:
            return now
        if not self._db.in_transaction:
            with self.writing(durable=False):  # a power cut that undoes it is a new boot
                return self.claim_time(clock)
        self.cache(epochs.EPOCH_KEY, epoch.encode())
        if kept is not None:  # claims from before epochs were kept count from this one
            self._db.execute("UPDATE claims SET expires_at = ? WHERE expires_at > ?", (now, now))
            self._db.execute("UPDATE waiters SET deadline = ? WHERE deadline > ?", (now, now))
        return now

    def bump(self, counter: str) -> int:
        """Add one to a persistent counter and return it: no value is ever handed out twice."""
        rows = self._db.execute(
            "INSERT INTO counters (name, value) VALUES (?, 1) "
            "ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value",
            (counter,),
        ).fetchall()
        return int(rows[0][0])

    def any_live_claim(self, now: Callable[[], float]) -> bool:
        """The cheap question a patch asks before loading any claim: with none stored, the
        claims' clock (``now``, which keeps the boot's epoch) is not even read."""
        if self._db.execute("SELECT 1 FROM claims LIMIT 1").fetchone() is None:
            return False
        sql = "SELECT 1 FROM claims WHERE expires_at > ? LIMIT 1"
        return self._db.execute(sql, (now(),)).fetchone() is not None

    def claim_rows(self, expired_by: float | None = None) -> list[Claim]:
        """Every stored claim (expired ones stay until swept), or those expired by then."""
        where = "" if expired_by is None else "WHERE expires_at <= ?"
        args = () if expired_by is None else (expired_by,)
        sql = f"SELECT {_CLAIM_COLUMNS} FROM claims {where} ORDER BY token"
        return [_claim(r) for r in self._db.execute(sql, args).fetchall()]

    def claim_row(self, claim_id: str) -> Claim | None:
        sql = f"SELECT {_CLAIM_COLUMNS} FROM claims WHERE id = ?"
        row = self._db.execute(sql, (claim_id,)).fetchone()
        return None if row is None else _claim(row)

    def claim_table(self) -> tuple[list[Claim], list[WaiterRow]]:
        """Every stored claim (token order) and every queued request (arrival order), in one
        statement: each claim operation starts by reading both, and the queue is mostly empty."""
        claims, waiters = [], []
        for row in self._db.execute(_TABLE_SQL).fetchall():
            if row[0] == 0:
                claims.append(_claim(row[1:12]))
            else:
                waiters.append(_waiter(row[1:]))
        return claims, waiters

    def put_claim(self, c: Claim) -> None:
        head = (c.id, c.token, c.agent, c.mode, json.dumps(c.targets), c.priority)
        self._db.execute(
            f"INSERT OR REPLACE INTO claims ({_CLAIM_COLUMNS}) VALUES ({_marks(11)})",
            (*head, int(c.strict), c.granted_at, c.expires_at, c.objective, _plan_json(c.plan)),
        )

    def drop_claim(self, claim_id: str) -> None:
        self._db.execute("DELETE FROM claims WHERE id = ?", (claim_id,))

    def earliest_expiry(self, now: float) -> float | None:
        sql = "SELECT MIN(expires_at) FROM claims WHERE expires_at > ?"
        found = self._db.execute(sql, (now,)).fetchone()[0]
        return None if found is None else float(found)

    def put_waiter(self, w: WaiterRow) -> None:
        r = w.request
        request = (r.id, r.arrival, r.agent, r.mode, json.dumps(r.targets), r.priority)
        self._db.execute(
            f"INSERT INTO waiters ({_WAITER_COLUMNS}, plan) VALUES ({_marks(14)})",
            (*request, int(r.strict), r.ttl, r.objective, w.pid, w.deadline, w.state, w.reason,
             _plan_json(r.plan)),
        )  # fmt: skip

    def waiter_rows(self) -> list[WaiterRow]:
        sql = f"SELECT {_WAITER_COLUMNS}, plan FROM waiters ORDER BY arrival"
        return [_waiter(r) for r in self._db.execute(sql).fetchall()]

    def settle_waiter(self, request_id: str, state: str, reason: str | None = None) -> None:
        sql = "UPDATE waiters SET state = ?, reason = ? WHERE id = ?"
        self._db.execute(sql, (state, reason, request_id))

    def drop_waiter(self, request_id: str) -> None:
        self._db.execute("DELETE FROM waiters WHERE id = ?", (request_id,))

    def wake_waiters(self, request_ids: Sequence[str]) -> None:
        """Nothing to store: the local waiters' FIFOs are poked after the commit."""

    def put_claim_record(self, r: ClaimRecord) -> None:
        """Insert or replace the record of claim ``r.id`` (the caller checked its revision in
        the same transaction)."""
        self._db.execute(
            "INSERT OR REPLACE INTO claim_records (id, state, agent, rev, body) "
            "VALUES (?, ?, ?, ?, ?)",
            (r.id, r.state, r.agent, r.rev, json.dumps(r.to_json())),
        )

    def add_claim_record(self, id: str, state: str, agent: str, rev: int, body: str) -> bool:
        """Insert a record given as its JSON text (``ClaimRecord.to_json()``'s) unless claim
        ``id`` has one: whether it was written (one statement either way)."""
        done = self._db.execute(
            "INSERT INTO claim_records (id, state, agent, rev, body) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO NOTHING",
            (id, state, agent, rev, body),
        )
        return done.rowcount == 1

    def claim_record(self, claim_id: str) -> ClaimRecord | None:
        sql = "SELECT body FROM claim_records WHERE id = ?"
        row = self._db.execute(sql, (claim_id,)).fetchone()
        return None if row is None else _record(row[0])

    def claim_records(self, states: Sequence[str] = ()) -> list[ClaimRecord]:
        """The records in those states (none named: all), oldest grant first."""
        where = f"WHERE state IN ({_marks(len(states))})" if states else ""
        sql = f"SELECT body FROM claim_records {where}"
        found = [_record(row[0]) for row in self._db.execute(sql, tuple(states)).fetchall()]
        return sorted(found, key=lambda r: (r.granted_at, r.token))


_CLAIM_COLUMNS = (
    "id, token, agent, mode, targets, priority, strict, granted_at, expires_at, objective, plan"
)
_WAITER_COLUMNS = (
    "id, arrival, agent, mode, targets, priority, strict, ttl, objective, pid, deadline, "
    "state, reason"
)

# Both tables as one: a 0 or 1 first, then the claim's columns padded to the waiter's 14 (the
# third column is the token of a claim, the arrival of a request: the order of each).
_TABLE_SQL = (
    f"SELECT 0, {_CLAIM_COLUMNS}, NULL, NULL, NULL FROM claims "
    f"UNION ALL SELECT 1, {_WAITER_COLUMNS}, plan FROM waiters ORDER BY 1, 3"
)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


@functools.lru_cache(maxsize=1024)
def _claim(row: tuple[Any, ...]) -> Claim:
    Claim = _kinds()[0]
    id_, token, agent, mode, targets, priority, strict, granted, expires, objective, plan = row
    return Claim(
        id_, token, agent, mode, _targets(targets), priority, bool(strict), granted,
        expires, objective, plan=None if plan is None else _plan(plan),
    )  # fmt: skip


# A row as read, to what it decodes to: every claim operation reads the whole queue, and
# most of its rows are as the last operation read them.
@functools.lru_cache(maxsize=1024)
def _waiter(row: tuple[Any, ...]) -> WaiterRow:
    _, Request, WaiterRow = _kinds()
    id_, arrival, agent, mode, targets, priority, strict, ttl, objective = row[:9]
    request = Request(
        id_, agent, mode, _targets(targets), priority, bool(strict), ttl, objective, arrival
    )  # fmt: skip
    pid, deadline, state, reason = row[9:13]
    if len(row) > 13 and row[13] is not None:
        from dataclasses import replace  # not on the read/patch path

        request = replace(request, plan=_plan(row[13]))
    return WaiterRow(request, pid, deadline, state, reason)


@functools.cache
def _kinds() -> tuple[type[Claim], type[Request], type[WaiterRow]]:
    """The classes rows decode to, imported at the first decode (a read or a patch never
    asks): an import statement in ``_waiter`` would cost more than the rest of a row."""
    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.claims.waiters import WaiterRow

    return Claim, Request, WaiterRow


# Each process sees every request of a busy queue once (by its next look, the queue has moved
# on, so ``_waiter``'s cache misses), but they mostly ask for the same few targets.
@functools.lru_cache(maxsize=256)
def _targets(raw: str) -> tuple[str, ...]:
    return tuple(json.loads(raw))


def _plan_json(plan: Plan | None) -> str | None:
    return None if plan is None else json.dumps(plan.to_json(), separators=(",", ":"))


def _plan(raw: str) -> Plan:
    from memkeeper.claims.plan import Plan  # not on the read/patch path

    return Plan.from_json(json.loads(raw))


def _record(body: str) -> ClaimRecord:
    from memkeeper.claims.lifecycle import ClaimRecord  # not on the read/patch path

    return ClaimRecord.from_json(json.loads(body))
