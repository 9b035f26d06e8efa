"""Serializable transactions over etcd: software transactional memory on compare-and-swap.

A ``Txn`` reads from one snapshot (the revision of its first read), remembers what it read
and buffers what it writes; ``commit`` is one etcd transaction that applies the writes only
if nothing it read has changed since: each key read must still have the ``mod_revision`` it
had (a key read as absent: still absent), and each range read must hold no key modified
after the snapshot (etcd compares a whole range at once, so a key added to it is seen too).
Otherwise ``ReadChanged``: ``run`` starts the work over on a new snapshot. This is what the etcd
store's ``writing()`` is built on (issue 12), as SQLite's is on ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.gateway import Compare
from memkeeper.store.retry import Retry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from memkeeper.store.etcd.gateway import Gateway

    T = TypeVar("T")

ATTEMPTS = 200
BACKOFF_S = 0.002


class ReadChanged(Exception):
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
        self.mods: dict[bytes, int] = {}  # key -> mod_revision of every key fetched
        self.writes: dict[bytes, bytes | None] = {}  # None: delete
        self.deleted: list[tuple[bytes, bytes]] = []  # ranges deleted whole: [start, end)
        self.leases: dict[bytes, int] = {}
        self.fetched: dict[tuple[bytes, bytes], list[etcdgw.KeyValue]] = {}  # ranges prefetched

    def prefetch(self, keys: list[bytes], ranges: list[tuple[bytes, bytes]] = []) -> None:  # noqa: B006
        """Read ``keys`` and the ``[start, end)`` ``ranges`` now, in one request (an etcd
        transaction of reads, at the snapshot), so that the ``get`` and ``scan`` calls that
        follow answer from memory: one round trip instead of one each. Nothing is compared
        at commit until those calls read them."""
        keys = [k for k in keys if k not in self.cache and k not in self.writes]
        ranges = [r for r in ranges if r not in self.fetched]
        if not keys and not ranges:
            return
        ops = [etcdgw.get(key, revision=self.snapshot) for key in keys]
        ops += [etcdgw.get(start, end, revision=self.snapshot) for start, end in ranges]
        done = self.gateway.txn([], ops)
        self._at(done.revision)
        for key, found in zip(keys, done.responses, strict=False):
            self.cache[key] = found[0].value if found else None
            self.mods[key] = found[0].mod_revision if found else 0
        for span, found in zip(ranges, done.responses[len(keys) :], strict=True):
            self.fetched[span] = found

    def get(self, key: bytes, *, track: bool = True) -> bytes | None:
        """The key's value at the snapshot (or as this transaction wrote it). ``track=False``
        leaves it out of the commit's comparisons: for keys that never change once written."""
        if key in self.writes:
            return self.writes[key]
        if self.range_deleted(key):
            return None
        if key not in self.cache:
            revision, found = self.gateway.range(key, revision=self.snapshot)
            self._at(revision)
            self.cache[key] = found[0].value if found else None
            self.mods[key] = found[0].mod_revision if found else 0
        if track:
            self.seen.setdefault(key, self.mods.get(key, 0))
        return self.cache[key]

    def range(self, prefix: bytes) -> list[tuple[bytes, bytes]]:
        """Every key starting with ``prefix`` and its value, this transaction's writes
        included, in key order."""
        return self.scan(prefix, etcdgw.prefix_end(prefix))

    def scan(
        self,
        start: bytes,
        end: bytes,
        *,
        per_key: bool = True,
        limit: int = 0,
        descending: bool = False,
        track: bool = True,
    ) -> list[tuple[bytes, bytes]]:
        """The keys of ``[start, end)`` and their values, this transaction's writes included,
        in key order (last first with ``descending``), at most ``limit`` (0: all).

        The commit compares the whole range (a key added or changed in it aborts it). With
        ``per_key`` it also compares each key found, which is what catches a key deleted from
        the range; ``per_key=False`` keeps a big range to one comparison (etcd allows 128 a
        transaction) and leaves deletions to the caller (a key every deleter writes);
        ``track=False`` compares nothing: for a read whose use stays right whatever changes in
        the range meanwhile (the trim of old messages)."""
        mine = any(start <= k < end for k in self.writes) or any(
            s < end and start < e for s, e in self.deleted
        )
        fetched = self.fetched.get((start, end))
        if fetched is not None:
            found = sorted(fetched, key=lambda kv: kv.key, reverse=descending)
        else:
            revision, found = self.gateway.range(
                start,
                end,
                revision=self.snapshot,
                limit=0 if mine else limit,
                descending=descending,
            )
            self._at(revision)
        if track and (start, end) not in self.ranges:
            self.ranges.append((start, end))
        merged: dict[bytes, bytes | None] = {}
        for kv in found:
            if per_key and track:
                self.seen.setdefault(kv.key, kv.mod_revision)
            self.mods.setdefault(kv.key, kv.mod_revision)
            self.cache.setdefault(kv.key, kv.value)
            if not self.range_deleted(kv.key):
                merged[kv.key] = kv.value
        for key, value in self.writes.items():
            if start <= key < end:
                merged[key] = value
        out = sorted(((k, v) for k, v in merged.items() if v is not None), reverse=descending)
        return out[:limit] if limit else out

    def put(self, key: bytes, value: bytes, lease: int = 0) -> None:
        # etcd refuses a put inside a range the same txn deletes: delete around it instead.
        if self.range_deleted(key):
            self._carve(key)
        self.writes[key] = value
        if lease:
            self.leases[key] = lease
        else:
            self.leases.pop(key, None)

    def delete(self, key: bytes) -> None:
        self.writes[key] = None
        self.leases.pop(key, None)

    def delete_range(self, start: bytes, end: bytes) -> None:
        """Delete every key of ``[start, end)`` at commit (one operation, whatever it holds);
        this transaction's own writes there are dropped (a later put there is kept)."""
        for key in [k for k in self.writes if start <= k < end]:
            del self.writes[key]
            self.leases.pop(key, None)
        self.deleted.append((start, end))

    def commit(self) -> int:
        """Apply the writes if nothing read has changed; the revision after it. ``ReadChanged``
        otherwise (nothing was written)."""
        if not self.writes and not self.deleted:
            return self.snapshot
        compare = [
            Compare(key, "MOD", "EQUAL", rev) if rev else Compare(key, "VERSION", "EQUAL", 0)
            for key, rev in self.seen.items()
        ]
        if self.snapshot:
            compare += [RangeCompare(start, end, self.snapshot + 1) for start, end in self.ranges]
        ops = [etcdgw.delete(start, end) for start, end in self.deleted]
        ops += [
            etcdgw.delete(key) if value is None else etcdgw.put(key, value, self.leases.get(key, 0))
            for key, value in self.writes.items()
        ]
        done = self.gateway.txn(compare, ops)
        if not done.succeeded:
            raise ReadChanged()
        return done.revision

    def landed(self, unique: bytes) -> int:
        """After a commit that failed: the revision at which this transaction's puts all
        stand, with its values, written together after its snapshot — a commit that did land,
        whose answer was lost and that the gateway sent again to another member (whose
        comparisons then failed against it). 0: it did not land, or nothing tells: another
        writer that raced from the same snapshot can have committed the very same values
        (two bumps of one counter), so a transaction that puts no key under ``unique`` (keys
        whose values no other transaction writes: the events, each chained to the one before)
        counts as not landed, and its block runs again. Every key written by one etcd
        transaction has that transaction's revision as ``mod_revision``."""
        puts = [(key, value) for key, value in self.writes.items() if value is not None]
        if not self.snapshot or not any(key.startswith(unique) for key, _ in puts):
            return 0
        found = self.gateway.txn([], [etcdgw.get(key) for key, _ in puts]).responses
        revisions = set()
        for (_, value), kvs in zip(puts, found, strict=True):
            if not kvs or kvs[0].value != value:
                return 0
            revisions.add(kvs[0].mod_revision)
        landed = revisions.pop()
        return landed if not revisions and landed > self.snapshot else 0

    def _carve(self, key: bytes) -> None:
        """Take ``key`` out of the deleted ranges: ``[s, e)`` becomes ``[s, key)`` and
        ``[key + NUL, e)`` (nothing sorts between a key and itself followed by NUL)."""
        after = key + b"\0"
        pieces = []
        for start, end in self.deleted:
            if start <= key < end:
                pieces += [(s, e) for s, e in ((start, key), (after, end)) if s < e]
            else:
                pieces.append((start, end))
        self.deleted = pieces

    def range_deleted(self, key: bytes) -> bool:
        """Whether ``key`` lies in a range this transaction deletes."""
        return any(start <= key < end for start, end in self.deleted)

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
    to other writers (after a random pause, growing). Its result and the revision of the
    commit; ``Contended`` once ``attempts`` were lost."""

    def once() -> tuple[T, int]:
        txn = Txn(gateway)
        result = work(txn)
        return result, txn.commit()

    retry = Retry(
        attempts,
        on=(ReadChanged,),
        delay=BACKOFF_S,
        max_delay=BACKOFF_S * 64,
        jitter=True,
        give_up=lambda _: Contended(
            f"a transaction lost to other writers {attempts} times in a row"
        ),
    )
    return retry(once)
