"""Pending writes in the etcd store (``keys``: ``P/pend/``, seqs from ``P/seq/pend``, and
``P/gen/pend``, changed by every drop so that a block that listed them conflicts with it). A
mixin of ``EtcdStore``."""

from __future__ import annotations

import json
import os

from memkeeper.records import PendingWrite
from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.core import EtcdCore


class PendingKeys(EtcdCore):
    def put_pending(self, write: PendingWrite) -> None:
        """Record a replace about to happen (``write.seq`` is ignored: the store numbers it,
        from a counter: unlike SQLite's rowid, a seq is never reused after a drop)."""
        self._alone(self._put_pending, write)

    def _put_pending(self, write: PendingWrite) -> None:
        seq = self._next_id("pend")
        self._put(self._key("pend", write.path, keys.number(seq)), codec.encode(list(write)[1:]))

    def _pending_rows(self, prefix: bytes) -> list[PendingWrite]:
        if self._writing:  # compared at commit: every drop changes it
            self._get(self._key("gen", "pend"))
        return [
            PendingWrite(keys.number_of(k), *json.loads(v)) for k, v in self._scan_prefix(prefix)
        ]

    def pending(self, path: str) -> list[PendingWrite]:
        """The replaces of ``path`` not yet known to be durable, oldest first."""
        with self.reading():
            return self._pending_rows(self._key("pend", path, ""))

    def pending_count(self, path: str) -> tuple[int, float | None]:
        """How many replaces of ``path`` are pending, and when the oldest was committed."""
        rows = self.pending(path)
        return len(rows), min((r.at for r in rows), default=None)

    def pending_paths(self, before: float) -> list[str]:
        """The paths with a pending replace committed before ``before``."""
        with self.reading():
            rows = self._pending_rows(self._key("pend", ""))
        return sorted({r.path for r in rows if r.at < before})

    def drop_pending(self, path: str) -> None:
        self._alone(self._drop_pending, path)

    def _drop_pending(self, path: str) -> None:
        prefix = self._key("pend", path, "")
        assert self._txn is not None
        self._txn.delete_range(prefix, etcdgw.prefix_end(prefix))
        self._put(self._key("gen", "pend"), os.urandom(8).hex().encode())
