"""The claim tables of the SQLite store: claims, queued requests and counters, and the
claims' clock (``claims.epoch``: this machine's uptime from the boot's epoch, kept in the
cache table).

A mixin of ``Store`` (it shares the one connection and its transactions); every SQL statement
about claims lives here. Call the writing methods inside ``Store.writing()``.
"""

from __future__ import annotations

import json

from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.clock import Clock


class ClaimRows(SqliteCore):
    def claim_time(self, clock: Clock) -> float:
        """The time claims are judged by: this boot's epoch plus the machine's uptime, the
        same for every process however its wall clock is set. The first look of a boot keeps
        its epoch (in the open transaction, else in one of its own) and ends every claim and
        wait of an earlier boot at that moment."""
        from memkeeper.claims import epoch as epochs  # a read or a patch never asks

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

    def any_live_claim(self, now: float) -> bool:
        """The cheap question a patch asks before loading any claim."""
        sql = "SELECT 1 FROM claims WHERE expires_at > ? LIMIT 1"
        return self._db.execute(sql, (now,)).fetchone() is not None

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
                claims.append(_claim(row[1:11]))
            else:
                waiters.append(_waiter(row[1:]))
        return claims, waiters

    def put_claim(self, c: Claim) -> None:
        head = (c.id, c.token, c.agent, c.mode, json.dumps(c.targets), c.priority)
        self._db.execute(
            f"INSERT OR REPLACE INTO claims ({_CLAIM_COLUMNS}) VALUES ({_marks(10)})",
            (*head, int(c.strict), c.granted_at, c.expires_at, c.objective),
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
            f"INSERT INTO waiters ({_WAITER_COLUMNS}) VALUES ({_marks(13)})",
            (*request, int(r.strict), r.ttl, r.objective, w.pid, w.deadline, w.state, w.reason),
        )

    def waiter_rows(self) -> list[WaiterRow]:
        sql = f"SELECT {_WAITER_COLUMNS} FROM waiters ORDER BY arrival"
        return [_waiter(r) for r in self._db.execute(sql).fetchall()]

    def settle_waiter(self, request_id: str, state: str, reason: str | None = None) -> None:
        sql = "UPDATE waiters SET state = ?, reason = ? WHERE id = ?"
        self._db.execute(sql, (state, reason, request_id))

    def drop_waiter(self, request_id: str) -> None:
        self._db.execute("DELETE FROM waiters WHERE id = ?", (request_id,))


_CLAIM_COLUMNS = (
    "id, token, agent, mode, targets, priority, strict, granted_at, expires_at, objective"
)
_WAITER_COLUMNS = (
    "id, arrival, agent, mode, targets, priority, strict, ttl, objective, pid, deadline, "
    "state, reason"
)

# Both tables as one: a 0 or 1 first, then the claim's columns padded to the waiter's 13 (the
# third column is the token of a claim, the arrival of a request: the order of each).
_TABLE_SQL = (
    f"SELECT 0, {_CLAIM_COLUMNS}, NULL, NULL, NULL FROM claims "
    f"UNION ALL SELECT 1, {_WAITER_COLUMNS} FROM waiters ORDER BY 1, 3"
)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _claim(row: tuple[Any, ...]) -> Claim:
    from memkeeper.claims.decisions import Claim  # not on the read/patch path

    id_, token, agent, mode, targets, priority, strict, granted, expires, objective = row
    return Claim(
        id_, token, agent, mode, tuple(json.loads(targets)), priority, bool(strict), granted,
        expires, objective,
    )  # fmt: skip


def _waiter(row: tuple[Any, ...]) -> WaiterRow:
    from memkeeper.claims.decisions import Request
    from memkeeper.claims.waiters import WaiterRow  # not on the read/patch path

    id_, arrival, agent, mode, targets, priority, strict, ttl, objective = row[:9]
    request = Request(
        id_, agent, mode, tuple(json.loads(targets)), priority, bool(strict), ttl, objective,
        arrival,
    )  # fmt: skip
    pid, deadline, state, reason = row[9:]
    return WaiterRow(request, pid, deadline, state, reason)
