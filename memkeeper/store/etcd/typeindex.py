"""The event log's index by type in the etcd store (format 6): ``P/evy/<type>\\0<id>`` holds
the event's path (JSON; null: about no file), written in the same transaction as the event,
so that the newest events of a type are one descending range of the index — what a
generated region shows reads as much at a million events as at a thousand (``recent``).

A prefix of an older format holds events without it. It is marked as this format
(``mark``) together with ``P/evyfrom``, the id of the last event then, in one transaction
that compares the head, so an older memkeeper cannot slip an unindexed event past the mark:
events after ``P/evyfrom`` are all in the index, and reads of the ones up to it walk the log
itself, from the newest back (``EventKeys.recent_events``). Nothing is backfilled: a prefix
pays for its old history only when a region reaches back into it.
"""

from __future__ import annotations

from memkeeper.store.etcd import keys
from memkeeper.store.etcd.keys import EVENTS_HEAD
from memkeeper.store.etcd.wire import Compare, put

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.store.etcd.gateway import Gateway

TABLE = "evy"
FROM = "evyfrom"  # P/evyfrom: events up to this id may be missing from the index


def key(prefix: bytes, type: str, event_id: int) -> bytes:
    """``P/evy/<type>\\0<id>``."""
    return keys.key(prefix, TABLE, type, keys.number(event_id))


def mark(gateway: Gateway, prefix: bytes, compare: Compare, ours: bytes) -> bool:
    """Put ``ours`` as the prefix's format where ``compare`` (on the format key) holds, with
    ``P/evyfrom`` the head's id when the log has events; False once ``compare`` fails (another
    memkeeper marked it first). An older memkeeper's append meanwhile moves the head: read
    it again."""
    head_key = keys.key(prefix, "cache", EVENTS_HEAD)
    marks = [put(keys.format_key(prefix), ours)]
    while True:
        found = gateway.range(head_key)[1]
        if found:
            head = found[0].value.partition(b" ")[0]
            same = Compare(head_key, "VALUE", "EQUAL", found[0].value)
            done = gateway.txn([compare, same], [*marks, put(prefix + FROM.encode(), head)])
        else:
            done = gateway.txn([compare, Compare(head_key, "VERSION", "EQUAL", 0)], marks)
        if done.succeeded:
            return True
        if not gateway.txn([compare], []).succeeded:
            return False
