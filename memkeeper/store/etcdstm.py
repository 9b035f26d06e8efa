"""Serializable transactions over etcd: software transactional memory on compare-and-swap.

A ``Txn`` reads from one snapshot (the revision of its first read), remembers what it read
and buffers what it writes; ``commit`` is one etcd transaction that applies the writes only
if nothing it read has changed since: each key read must still have the ``mod_revision`` it
had (a key read as absent: still absent), and each range read must hold no key modified
after the snapshot (etcd compares a whole range at once, so a key added to it is seen too).
Otherwise ``Retry``: ``run`` starts the work over on a new snapshot. This is what the etcd
store's ``writing()`` is built on (issue 12), as SQLite's is on ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

import random
import time

from memkeeper.store import etcdgw
from memkeeper.store.etcdgw import Compare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from memkeeper.store.etcdgw import Gateway

    T = TypeVar("T")

ATTEMPTS = 200
BACKOFF_S = 0.002


class Retry(Exception):
    """What the transaction read changed before it committed: run it again."""


class Contended(Exception):
    """A transaction lost to other writers ``ATTEMPTS`` times in a row."""


class Txn:
    """One optimistic transaction on ``gateway``'s cluster."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.snapshot = 0  # the revision every read sees (0 until the first read)
        self.seen: dict[bytes, int] = {}  # key -> mod_revision when read (0: absent)
        self.ranges: list[tuple[bytes, bytes]] = []
        self.cache: dict[bytes, bytes | None] = {}
        self.writes: dict[bytes, bytes | None] = {}  # None: delete
        self.leases: dict[bytes, int] = {}

    def get(self, key: bytes) -> bytes | None:
        if key in self.writes:
            return self.writes[key]
        if key in self.cache:
            return self.cache[key]
        revision, found = self.gateway.range(key, revision=self.snapshot)
        self._at(revision)
        value = found[0].value if found else None
        self.seen[key] = found[0].mod_revision if found else 0
        self.cache[key] = value
        return value

    def range(self, prefix: bytes) -> list[tuple[bytes, bytes]]:
        """Every key starting with ``prefix`` and its value, this transaction's writes
        included, in key order."""
        end = etcdgw.prefix_end(prefix)
        revision, found = self.gateway.range(prefix, end, revision=self.snapshot)
        self._at(revision)
        self.ranges.append((prefix, end))
        merged: dict[bytes, bytes | None] = {}
        for kv in found:
            self.seen.setdefault(kv.key, kv.mod_revision)
            self.cache.setdefault(kv.key, kv.value)
            merged[kv.key] = kv.value
        for key, value in self.writes.items():
            if key.startswith(prefix):
                merged[key] = value
        return sorted((k, v) for k, v in merged.items() if v is not None)

    def put(self, key: bytes, value: bytes, lease: int = 0) -> None:
        self.writes[key] = value
        if lease:
            self.leases[key] = lease
        else:
            self.leases.pop(key, None)

    def delete(self, key: bytes) -> None:
        self.writes[key] = None
        self.leases.pop(key, None)

    def commit(self) -> int:
        """Apply the writes if nothing read has changed; the revision after it. ``Retry``
        otherwise (nothing was written)."""
        if not self.writes:
            return self.snapshot
        compare = [
            Compare(key, "MOD", "EQUAL", rev) if rev else Compare(key, "VERSION", "EQUAL", 0)
            for key, rev in self.seen.items()
        ]
        if self.snapshot:
            compare += [RangeCompare(start, end, self.snapshot + 1) for start, end in self.ranges]
        ops = [
            etcdgw.delete(key) if value is None else etcdgw.put(key, value, self.leases.get(key, 0))
            for key, value in self.writes.items()
        ]
        done = self.gateway.txn(compare, ops)
        if not done.succeeded:
            raise Retry()
        return done.revision

    def _at(self, revision: int) -> None:
        if not self.snapshot:
            self.snapshot = revision


class RangeCompare(Compare):
    """Every key of ``[start, end)`` was last modified before revision ``below``."""

    def __init__(self, start: bytes, end: bytes, below: int) -> None:
        super().__init__(start, "MOD", "LESS", below)
        self.end = end

    def to_json(self) -> dict[str, object]:
        out = super().to_json()
        out["range_end"] = etcdgw.b64(self.end)
        return out


def run(gateway: Gateway, work: Callable[[Txn], T], attempts: int = ATTEMPTS) -> tuple[T, int]:
    """``work`` in a transaction, committed; started over on a fresh snapshot while it loses
    to other writers. Its result and the revision of the commit."""
    for attempt in range(attempts):
        txn = Txn(gateway)
        result = work(txn)
        try:
            return result, txn.commit()
        except Retry:
            time.sleep(random.uniform(0, BACKOFF_S * min(2**attempt, 64)))
    raise Contended(f"a transaction lost to other writers {attempts} times in a row")
