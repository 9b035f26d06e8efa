"""The event log of the etcd store (``keys``: ``P/ev/``, its indexes ``P/evp/``, ``P/evl/``,
``P/evt/``, ``P/evc/``, the head ``P/cache/events:head``), its checkpoints (``P/chk/``) and
compaction, and its tallies (``P/tally/``). A mixin of ``EtcdStore``.

The chain: ``append_event`` reads the head key inside the transaction and writes it back, so
two concurrent appends conflict on it and one of them retries: ids 1, 2, 3… without gap or
fork, one chain for every writer of the prefix. Events never change once written, so reading
them is left out of the commit's comparisons (etcd allows 128 a transaction); ranges read are
compared as one each (``Txn.scan(per_key=False)``).
"""

from __future__ import annotations

import json
import os

from memkeeper import events as ev
from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.core import EtcdCore
from memkeeper.store.etcd.keys import EVENTS_HEAD

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.checkpoints import Checkpoint
    from memkeeper.events import Sign
    from memkeeper.records import Event

_CLAIM_ENDS = ("claim.released", "claim.expired", "claim.aborted")


class EventKeys(EtcdCore):
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
        """Chain a new event after the head (read in this transaction: concurrent appends
        conflict on it), signed with ``sign`` (None: unsigned). Call inside ``writing()``."""
        result: Event = self._alone(self._append_event, ts, actor, type, path, section, data, sign)
        return result

    def _append_event(
        self,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        sign: Sign | None,
    ) -> Event:
        head = self._key("cache", EVENTS_HEAD)
        raw = self._get(head)
        tail = None
        if raw is not None:
            head_id, _, head_hash = raw.decode().partition(" ")
            tail = int(head_id), head_hash
        event = ev.next_event(tail, ts, actor, type, path, section, data, sign)
        number = keys.number(event.id)
        self._put(self._key("ev", number), codec.event_json(event))
        self._put(head, f"{event.id} {event.hash}".encode())
        reason = data.get("reason")
        self._put(self._key("evt", type, ts, number), codec.encode(reason))
        if path is not None:
            about = keys.about(section)
            self._put(self._key("evp", path, about, number), b"")
            self._put(self._key("evl", path, about), number.encode())
        claim = data.get("id")
        if type in _CLAIM_ENDS and isinstance(claim, str):
            self._put(self._key("evc", claim, number), b"")
        return event

    def events_head(self) -> tuple[int, str] | None:
        """The id and hash of the last event appended; None before the first."""
        found = self.cached(EVENTS_HEAD)
        if found is None:
            return None
        head_id, _, head_hash = found.partition(" ")
        return int(head_id), head_hash

    def _events_by_id(self, ids: list[int]) -> list[Event]:
        """These events, in this order (one range when they lie close together)."""
        if not ids:
            return []
        low, high = min(ids), max(ids)
        found: dict[int, Event] = {}
        if len(ids) > 2 and high - low + 1 <= 4 * len(ids):
            start, end = self._key("ev", keys.number(low)), self._key("ev", keys.number(high + 1))
            for key, raw in self._scan(start, end):
                event = codec.event(key, raw)
                found[event.id] = event
        else:
            for event_id in set(ids):
                key = self._key("ev", keys.number(event_id))
                # Events never change once written: left out of the comparisons.
                got = self._get(key, track=False)
                if got is not None:
                    found[event_id] = codec.event(key, got)
        return [found[i] for i in ids if i in found]

    def last_event(self) -> Event | None:
        found = self._scan_prefix(self._key("ev", ""), limit=1, descending=True)
        return None if not found else codec.event(*found[0])

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]:
        """Events with ``id > since``, oldest first."""
        if limit is not None and limit == 0:
            return []
        start = self._key("ev", keys.number(max(since, 0) + 1))
        end = etcdgw.prefix_end(self._key("ev", ""))
        count = 0 if limit is None or limit < 0 else limit
        return [codec.event(k, v) for k, v in self._scan(start, end, limit=count)]

    def events_of(self, path: str, section: str | None, limit: int) -> list[Event]:
        """The last ``limit`` events about ``path`` (and ``section``; None: about the whole
        file), newest first."""
        if limit == 0:
            return []
        prefix = self._key("evp", path, keys.about(section), "")
        found = self._scan_prefix(prefix, limit=max(limit, 0), descending=True)
        with self.reading():
            return self._events_by_id([keys.number_of(k) for k, _ in found])

    def last_events(self, path: str) -> dict[str | None, Event]:
        """The last event about each section of ``path`` (key None: about the whole file)."""
        with self.reading():
            found = self._scan_prefix(self._key("evl", path, ""))
            events = self._events_by_id(sorted(int(v) for _, v in found))
        return {event.section: event for event in events}

    def events_typed(self, types: tuple[str, ...], since_ts: str) -> list[Event]:
        """Events of these types from ``since_ts`` on, oldest first."""
        with self.reading():
            ids = sorted({i for t in types for i, _ in self._typed(t, since_ts)})
            return self._events_by_id(ids)

    def _typed(self, type: str, since_ts: str) -> list[tuple[int, bytes]]:
        start = self._key("evt", type, since_ts)
        end = etcdgw.prefix_end(self._key("evt", type, ""))
        return [(keys.number_of(k), v) for k, v in self._scan(start, end)]

    def count_events(self, type: str, since_ts: str, reason: str | None = None) -> int:
        """Events of ``type`` at or after ``since_ts`` (and with ``data.reason``, if given)."""
        found = self._typed(type, since_ts)
        if reason is None:
            return len(found)
        return sum(1 for _, v in found if json.loads(v) == reason)

    def last_claim_event(self, claim_id: str) -> Event | None:
        """The latest event that ended claim ``claim_id`` (released, expired or aborted)."""
        prefix = self._key("evc", claim_id, "")
        with self.reading():
            found = self._scan_prefix(prefix, limit=1, descending=True)
            events = self._events_by_id([keys.number_of(k) for k, _ in found])
        return events[0] if events else None

    def tally(self, kind: str, at: float, keep_s: float = 3600.0) -> None:
        """Count one ``kind`` occurrence at ``at``, forgetting those older than ``keep_s``.

        The forgetting is a blind range delete: a count in a concurrent block is not compared
        against it, which cannot matter — it only removes what is older than any count asks."""
        self._alone(self._tally, kind, at, keep_s)

    def _tally(self, kind: str, at: float, keep_s: float) -> None:
        cut = at - keep_s
        assert self._txn is not None
        if cut > 0:
            self._txn.delete_range(
                self._key("tally", kind, ""), self._key("tally", kind, keys.at(cut))
            )
        unique = os.urandom(6).hex()
        self._put(self._key("tally", kind, keys.at(at), unique), repr(at).encode())

    def tally_count(self, kind: str, since: float) -> int:
        start = (
            self._key("tally", kind, keys.at(since)) if since > 0 else self._key("tally", kind, "")
        )
        end = etcdgw.prefix_end(self._key("tally", kind, ""))
        return sum(1 for _, v in self._scan(start, end) if float(v) >= since)

    # -- the chain's checkpoints, and compaction (docs/reference.md §8) -------------------

    def chain_checkpoint(self, kind: str) -> Checkpoint | None:
        """The checkpoint of ``kind`` (``P/chk/<kind>``; None: none written);
        ``checkpoints.Unreadable`` for a value that is not one."""
        raw = self._get(self._key("chk", kind))
        if raw is None:
            return None
        from memkeeper.checkpoints import decode

        return decode(raw)

    def put_chain_checkpoint(self, cp: Checkpoint) -> None:
        """Keep ``cp`` as the checkpoint of its kind, over the one before."""
        from memkeeper.checkpoints import encode

        self._alone(self._put, self._key("chk", cp.kind), encode(cp).encode())

    def compact_events(self, through: int) -> int:
        """Remove the events with ids up to ``through`` (one range of ``P/ev/``) and their
        index keys by type, path and claim, a few operations an event: call it inside
        ``writing()`` on a few dozen events (``MAX_TXN_OPS``). How many were removed; the
        newest event is always kept. A path's last-event key (``P/evl/``) may then name a
        compacted event: readers skip an event that is not there."""
        result: int = self._alone(self._compact_events, through)
        return result

    def _compact_events(self, through: int) -> int:
        # The head only moves on: left out of the comparisons, so appends never undo this.
        head = self._get(self._key("cache", EVENTS_HEAD), track=False)
        if head is not None:
            through = min(through, int(head.split(b" ")[0]) - 1)
        start, end = self._key("ev", ""), self._key("ev", keys.number(through + 1))
        # Events never change once written: left out of the commit's comparisons.
        found = self._scan(start, end, track=False)
        assert self._txn is not None
        for key, raw in found:
            event = codec.event(key, raw)
            number = keys.number(event.id)
            self._delete(self._key("evt", event.type, event.ts, number))
            if event.path is not None:
                self._delete(self._key("evp", event.path, keys.about(event.section), number))
            claim = event.data.get("id")
            if event.type in _CLAIM_ENDS and isinstance(claim, str):
                self._delete(self._key("evc", claim, number))
        if found:
            self._txn.delete_range(start, end)
        return len(found)
