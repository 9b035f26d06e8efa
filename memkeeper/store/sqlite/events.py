"""The events table of the SQLite store — the hash-chained log, with its head recorded in the
cache, its checkpoints (table ``checkpoints``: one row per kind, the record as JSON) and its
compaction — and the tallies: counts of occurrences not worth an event (lost races), kept for
the claims' metrics window.

A mixin of ``Store`` (it shares the one connection and its transactions). Call the writing
methods inside ``Store.writing()``.
"""

from __future__ import annotations

import json

from memkeeper import events as ev
from memkeeper.records import Event
from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.checkpoints import Checkpoint
    from memkeeper.events import Sign

EVENTS_HEAD = "events:head"  # cache key: "ID HASH" of the last event appended


class EventRows(SqliteCore):
    def append_event(
        self,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        sign: Sign | None = None,
    ) -> Event:
        """Chain a new event after the last one, signed with ``sign`` (None: unsigned). Call
        inside ``writing()``."""
        tail = self._db.execute("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
        event = ev.next_event(tail, ts, actor, type, path, section, data, sign)
        self._db.execute(
            "INSERT INTO events (id, ts, actor, type, path, section, data, prev, hash, signer, "
            "sig) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*event[:6], _DATA.encode(data), *event[7:]),
        )
        self._db.execute(  # inside writing(): cache() without its own transaction
            "INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)",
            (EVENTS_HEAD, f"{event.id} {event.hash}"),
        )
        return event

    def events_head(self) -> tuple[int, str] | None:
        """The id and hash of the last event appended, recorded beside the log (a log that
        ends before it lost its tail); None for a store that has not recorded one yet."""
        found = self.cached(EVENTS_HEAD)
        if found is None:
            return None
        head_id, _, head_hash = found.partition(" ")
        return int(head_id), head_hash

    def last_event(self) -> Event | None:
        row = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else _event(row)

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]:
        """Events with ``id > since``, oldest first."""
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?",
            (since, -1 if limit is None else limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def events_of(self, path: str, section: str | None, limit: int) -> list[Event]:
        """The last ``limit`` events about ``path`` (and ``section``; None: about the whole
        file), newest first."""
        where = "section IS NULL" if section is None else "section = ?"
        params = (path,) if section is None else (path, section)
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE path = ? AND {where} "
            "ORDER BY id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def last_events(self, path: str) -> dict[str | None, Event]:
        """The last event about each section of ``path`` (key None: about the whole file)."""
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE id IN "
            "(SELECT MAX(id) FROM events WHERE path = ? GROUP BY section)",
            (path,),
        ).fetchall()
        return {event.section: event for event in map(_event, rows)}

    def events_typed(self, types: tuple[str, ...], since_ts: str) -> list[Event]:
        """Events of these types from ``since_ts`` on, oldest first."""
        marks = ", ".join("?" * len(types))
        rows = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE type IN ({marks}) AND ts >= ? ORDER BY id",
            (*types, since_ts),
        ).fetchall()
        return [_event(r) for r in rows]

    def last_claim_event(self, claim_id: str) -> Event | None:
        """The latest event that ended claim ``claim_id`` (released, expired or aborted)."""
        row = self._db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE type IN "
            "('claim.released', 'claim.expired', 'claim.aborted') "
            "AND json_extract(data, '$.id') = ? ORDER BY id DESC LIMIT 1",
            (claim_id,),
        ).fetchone()
        return None if row is None else _event(row)

    def count_events(self, type: str, since_ts: str, reason: str | None = None) -> int:
        """Events of ``type`` at or after ``since_ts`` (and with ``data.reason``, if given)."""
        sql = "SELECT COUNT(*) FROM events WHERE type = ? AND ts >= ?"
        if reason is None:
            return int(self._db.execute(sql, (type, since_ts)).fetchone()[0])
        sql += " AND json_extract(data, '$.reason') = ?"
        return int(self._db.execute(sql, (type, since_ts, reason)).fetchone()[0])

    def tally(self, kind: str, at: float, keep_s: float = 3600.0) -> None:
        """Count one ``kind`` occurrence at ``at``, forgetting those older than ``keep_s``."""
        self._db.execute("DELETE FROM tallies WHERE kind = ? AND at < ?", (kind, at - keep_s))
        self._db.execute("INSERT INTO tallies (kind, at) VALUES (?, ?)", (kind, at))

    def tally_count(self, kind: str, since: float) -> int:
        sql = "SELECT COUNT(*) FROM tallies WHERE kind = ? AND at >= ?"
        return int(self._db.execute(sql, (kind, since)).fetchone()[0])

    # -- the chain's checkpoints, and compaction (docs/reference.md §8) -------------------

    def chain_checkpoint(self, kind: str) -> Checkpoint | None:
        """The checkpoint of ``kind`` (None: none written); ``checkpoints.Unreadable`` for a
        row that is not one."""
        sql = "SELECT record FROM checkpoints WHERE kind = ?"
        row = self._db.execute(sql, (kind,)).fetchone()
        if row is None:
            return None
        from memkeeper.checkpoints import decode

        return decode(row[0])

    def put_chain_checkpoint(self, cp: Checkpoint) -> None:
        """Keep ``cp`` as the checkpoint of its kind, over the one before."""
        from memkeeper.checkpoints import encode

        sql = "INSERT OR REPLACE INTO checkpoints (kind, record) VALUES (?, ?)"
        self._db.execute(sql, (cp.kind, encode(cp)))

    def compact_events(self, through: int) -> int:
        """Remove the events with ids up to ``through`` (their indexes go with them); how many
        were removed. The newest event is always kept: the next append chains after it."""
        cursor = self._db.execute(
            "DELETE FROM events WHERE id <= ? AND id < (SELECT MAX(id) FROM events)", (through,)
        )
        return cursor.rowcount


# An event's data as stored.
_DATA = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_EVENT_COLUMNS = "id, ts, actor, type, path, section, data, prev, hash, signer, sig"


def _event(row: tuple[Any, ...]) -> Event:
    id_, ts, actor, type_, path, section, data, prev, hash_, signer, sig = row
    return Event(id_, ts, actor, type_, path, section, json.loads(data), prev, hash_, signer, sig)
