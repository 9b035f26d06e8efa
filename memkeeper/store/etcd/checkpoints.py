"""The event chain's checkpoints in the etcd store (``keys``: ``P/chk/<kind>``, the record as
JSON), and the compaction of the log's oldest events. A mixin of ``EtcdStore``.

A compaction removes the events (one range of ``P/ev/``) and what indexes them by type
(``P/evt/``), by path (``P/evp/``) and by claim (``P/evc/``), a few operations an event: etcd
takes ``MAX_TXN_OPS`` a transaction, so it is called on a few dozen events at a time. A path's
last event (``P/evl/``) may name a compacted one: readers skip an event that is not there.
"""

from __future__ import annotations

from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd.core import EtcdCore
from memkeeper.store.etcd.keys import EVENTS_HEAD

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.checkpoints import Checkpoint

_CLAIM_ENDS = ("claim.released", "claim.expired", "claim.aborted")


class CheckpointKeys(EtcdCore):
    def chain_checkpoint(self, kind: str) -> Checkpoint | None:
        """The checkpoint of ``kind`` (None: none written); ``checkpoints.Unreadable`` for a
        value that is not one."""
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
        """Remove the events with ids up to ``through``, and their index keys; how many were
        removed. The newest event is always kept (the head key names it). Call inside
        ``writing()`` on a few dozen events (``MAX_TXN_OPS``)."""
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
