"""The state store on etcd (issue 12): the domain methods of ``store.sqlite.Store`` for files,
sections, bodies, events, the cache, tallies, claims, queued requests, counters,
reconciliations, proposals and pending writes.

Transactions. ``writing()`` runs its block in one ``etcdstm.Txn``: every read sees one
snapshot (the revision of its first read), every write is buffered (and seen by the block's
later reads), and the block's end commits it all in one etcd transaction that compares every
key and range the block read. If another writer changed any of them since, nothing is applied
and ``StoreRetry`` is raised: the caller re-runs the whole operation (``Workspace.retrying``
will). ``reading()`` is the same snapshot without a commit; outside both, each read is a plain
(linearizable) range, and each writing method commits alone in a transaction of its own,
retried on conflict — the equivalent of SQLite's autocommit. When no member answers, every
method raises ``EnvironmentFailure`` with ``reason="store_unavailable"``.

Keys, under the prefix ``P`` (bytes ending in ``/``); ``\\0`` separates a path from what
follows it (neither paths nor keys hold one); numbers are zero-padded to 20 digits so key
order is numeric order; values are compact JSON:

- ``P/file/<path>``: ``[file_rev, file_hash]``;
- ``P/sec/<path>``: every section row of the file in ONE key,
  ``{key: [ord, rev, hash, present, title, level, base, heading, body, lines]}``;
- ``P/body/<path>\\0<key>\\0<rev>``: a section's body at an older rev (the merge bases);
- ``P/ev/<id>``: an event, ``[ts, actor, type, path, section, data, prev, hash]``;
- ``P/cache/<key>``: cached text; ``P/cache/events:head`` is the chain's head ``"ID HASH"``
  (the same cache key as SQLite's);
- ``P/evp/<path>\\0<s>\\0<id>`` (empty): the events about a path, ``s`` being ``-`` for
  the whole file and ``+KEY`` for a section; ``P/evl/<path>\\0<s>``: the id of the last one;
- ``P/evt/<type>\\0<ts>\\0<id>``: ``data.reason`` as JSON — events by type from a time on,
  and their count by reason, without reading the events;
- ``P/evc/<claim id>\\0<id>`` (empty): claim.released / expired / aborted events by claim;
- ``P/tally/<kind>\\0<at>\\0<random>``: ``at`` (``%020.6f`` in the key, exact in the value);
- ``P/rec/<id>``: a reconciliation; ``P/reco/<path>\\0<region>``: the id of the open one;
- ``P/prop/<id>``: a proposal;
- ``P/ver/<path>\\0<file hash>``: the ``file_rev`` at which the file had those bytes (the
  last ``KEEP_VERSIONS``): how a root tells a version it is behind on from an edit;
- ``P/pend/<path>\\0<seq>``: a pending write; ``P/gen/pend`` changes on every drop;
- ``P/seq/<name>``: the last id handed out (``rec``, ``prop``, ``pend``);
- ``P/lease/claim\\0<id>``: a claim, ``[token, agent, mode, targets, priority, strict,
  granted_at, expires_at, objective]``;
- ``P/lease/wait\\0<id>``: a queued request and its wait, ``[arrival, agent, mode, targets,
  priority, strict, ttl, objective, pid, deadline, state, reason]``;
- ``P/lease/claim\\0`` and ``P/lease/wait\\0`` (the empty id: claim and request ids are
  never empty): a random value, changed by every drop of a claim / a waiter;
- ``P/ctr/<name>``: a counter of ``bump`` (``token``: the highest fencing token ever issued;
  ``request``: the last arrival number).

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
its clock says is due; etcd leases per claim (a claim key that goes by itself when its holder
stops renewing) are a later step. Unlike SQLite's keys, a put of an existing waiter id replaces
it, and a second claim with a token already used is stored, rather than refused: ids and tokens
come from ``bump``.

Why the section rows of a file share one key, not one key each (the brief's first design):
every change of a section changes its file's ``file_rev`` and ``file_hash`` too, so two writes
to one file conflict whatever the granularity — and one key makes indexing a file of any
section count one operation, and reading a section one get. Bodies bytes are stored as text
when they are UTF-8 (memkeeper indexes only UTF-8 files), else as ``{"b64": …}``.

Bodies are kept lazily: the current body of each present section is its row's, so a put of
rows archives a body under ``P/body/`` only when the section moves on from it (a new rev, or
gone) — indexing a new file writes no body key; ``body_at`` answers from the row first.
Pruning follows ``proposaltables`` (``KEEP_BODIES`` / ``PRUNE_EVERY``) with one range delete.

The chain: ``append_event`` reads the head key inside the transaction and writes it back, so
two concurrent appends conflict on it and one of them retries: ids 1, 2, 3… without gap or
fork, one chain for every writer of the prefix. Events never change once written, so reading
them is left out of the commit's comparisons (etcd allows 128 a transaction); ranges read are
compared as one each (``Txn.scan(per_key=False)``) and the tables that delete (pending, the
lease tables) change a key on every delete that their range reads also read.

Limits: etcd takes at most 128 operations and 128 comparisons per transaction and requests of
1.5 MiB. A typical patch is 7 to 10 operations. A block that would exceed either limit — an
index of a file where 120+ sections changed at once (each archives a body), or a file above
~1.4 MiB of text — fails before anything is sent with an ``EnvironmentFailure`` saying so
(``reason="store_too_large"``); nothing is written.

A lost answer: when the connection drops after a commit was sent, the gateway sends it again
to the next member; if the first had applied it, the resent one fails its comparisons. So a
failed commit checks whether its puts all stand with its values at one revision after its
snapshot (``Txn.landed``: one etcd transaction gives all its keys one revision) and, when it
appended an event (a value no other writer's transaction holds), counts as done rather than
raising ``StoreRetry``; one without an event runs again (its writes — counters, caches — are
made again from what the store holds then: a counter skips a value, never repeats one).
When no member answers the commit at all, its outcome is unknown if it had reached one
(``store_unavailable`` all the same). One ``EtcdStore`` is for one thread at a time (its
gateway's connections are not shared).
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os

from memkeeper import events as ev
from memkeeper.coordination import Proposal, Reconciliation
from memkeeper.errors import EnvironmentFailure
from memkeeper.records import Event, FileState, PendingWrite, SectionRow
from memkeeper.store import etcdgw, proposaltables
from memkeeper.store.etcdgw import Gateway
from memkeeper.store.etcdstm import Retry, Txn
from memkeeper.store.retry import StoreRetry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow

EVENTS_HEAD = "events:head"  # as in store.sqlite: the cache key of the chain's head
MAX_TXN_OPS = 128  # etcd's --max-txn-ops default: operations, and comparisons, per txn
MAX_REQUEST_BYTES = 1536 * 1024  # etcd's --max-request-bytes default
REQUEST_MARGIN = 64 * 1024  # for the request's framing and the comparisons
OP_OVERHEAD = 32  # bytes a put costs beyond its key and value
AUTOCOMMIT_ATTEMPTS = 50
LEASE_GRACE_S = 2.0  # a claim's etcd lease outlives its expires_at by this much
KEEP_VERSIONS = 256  # the versions of a file ``version_rev`` knows: its last revs …
PRUNE_VERSIONS = 64  # … the older ones forgotten every this many revs
_CLAIM_ENDS = ("claim.released", "claim.expired", "claim.aborted")
_N = "{:020d}"
_CLAIMS, _WAITERS = "claim", "wait"  # the two tables under P/lease/
__all__ = ["EtcdStore", "StoreRetry"]


class EtcdStore:
    """The state of one memory home (or a fleet of them) under ``prefix`` on an etcd cluster."""

    def __init__(self, gateway: Gateway, prefix: bytes) -> None:
        self.gateway = gateway
        self.prefix = prefix if prefix.endswith(b"/") else prefix + b"/"
        self._txn: Txn | None = None  # the snapshot of the current reading() or writing()
        self._writing = False
        self._decoded: dict[bytes, tuple[bytes, dict[str, SectionRow]]] = {}
        self._after_commit: list[int] = []  # leases to revoke once the transaction commits

    @classmethod
    def open(cls, endpoints: str, prefix: str) -> EtcdStore:
        """A store on the cluster at ``HOST:PORT[,HOST:PORT…]`` under ``prefix``."""
        return cls(Gateway(etcdgw.parse_endpoints(endpoints)), prefix.encode())

    def close(self) -> None:
        self.gateway.close()

    def trim_log(self, limit: int = 0) -> None:
        """Nothing to trim: etcd compacts its own log (the SQLite store's is a WAL file)."""

    # -- transactions -----------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, *, durable: bool = True) -> Iterator[None]:
        """One optimistic transaction: committed at the end of the block (``StoreRetry`` when
        another writer changed what it read), dropped on error. Every etcd commit is durable
        (each member fsyncs its log), so ``durable`` changes nothing."""
        if self._writing:
            raise EnvironmentFailure(
                "state store: a transaction is already open (nested writing())"
            )
        outer = self._txn  # a writing() inside reading(): its own transaction, as autocommit
        txn = Txn(self.gateway)
        self._txn, self._writing, self._after_commit = txn, True, []
        try:
            yield
        finally:
            self._txn, self._writing = outer, False
        revoke, self._after_commit = self._after_commit, []
        self._commit(txn)
        for lease in revoke:  # leases of claims dropped or moved to a new lease: free them
            with contextlib.suppress(etcdgw.Unavailable, etcdgw.EtcdError):
                self.gateway.revoke(lease)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A consistent snapshot for several reads (inside writing(): the block's own)."""
        if self._txn is not None:
            yield
            return
        self._txn = Txn(self.gateway)
        try:
            yield
        finally:
            self._txn = None

    def prefetch_file(self, path: str) -> None:
        """Inside ``writing()``: read in one round trip what an operation on ``path`` reads
        first — its file and section rows, the events' head, the claims — instead of one
        round trip each as the operation asks for them."""
        if self._txn is None:
            return
        claims = self._key("lease", _CLAIMS, "")
        keys = [self._key("file", path), self._key("sec", path), self._key("cache", EVENTS_HEAD)]
        with self._talking():
            self._txn.prefetch(keys, [(claims, etcdgw.prefix_end(claims))])

    def keep_version(self, path: str, file_hash: str, file_rev: int) -> None:
        """Remember that ``path`` was, at ``file_rev``, the bytes hashing to ``file_hash``: a
        root whose file holds that version (a checkout, a clone made earlier) is behind, not
        edited. The last ``KEEP_VERSIONS`` revs are kept; every ``PRUNE_VERSIONS`` revs the
        older ones go (a range read and at most ``PRUNE_VERSIONS`` deletes, in this block)."""
        self._alone(self._keep_version, path, file_hash, file_rev)

    def _keep_version(self, path: str, file_hash: str, file_rev: int) -> None:
        self._put(self._key("ver", path, file_hash), str(file_rev).encode())
        cut = file_rev - KEEP_VERSIONS
        if cut > 0 and file_rev % PRUNE_VERSIONS == 0:
            for key, raw in self._scan_prefix(self._key("ver", path, "")):
                if int(raw) <= cut:
                    self._delete(key)

    def version_rev(self, path: str, file_hash: str) -> int | None:
        """The ``file_rev`` at which ``path`` held ``file_hash``'s bytes, while it is kept."""
        raw = self._get(self._key("ver", path, file_hash), track=False)
        return None if raw is None else int(raw)

    def prefetch_claims(self) -> None:
        """Inside ``writing()``: read in one round trip what a lease operation reads first —
        the claims and the queue, the request and token counters, the events' head."""
        if self._txn is None:
            return
        leases = self._key("lease", "")
        keys = [self._key("ctr", name) for name in ("request", "token")]
        with self._talking():
            self._txn.prefetch(
                [*keys, self._key("cache", EVENTS_HEAD)], [(leases, etcdgw.prefix_end(leases))]
            )

    def _commit(self, txn: Txn) -> None:
        ops = len(txn.writes) + len(txn.deleted)
        compares = len(txn.seen) + len(txn.ranges)
        size = sum(len(k) + len(v or b"") + OP_OVERHEAD for k, v in txn.writes.items())
        if ops > MAX_TXN_OPS or compares > MAX_TXN_OPS or size > MAX_REQUEST_BYTES - REQUEST_MARGIN:
            raise EnvironmentFailure(
                f"state store: this change needs {ops} operations, {compares} comparisons and "
                f"~{size} bytes in one etcd transaction; etcd allows {MAX_TXN_OPS}, "
                f"{MAX_TXN_OPS} and {MAX_REQUEST_BYTES - REQUEST_MARGIN} — nothing was written; "
                "split the file, or raise etcd's --max-txn-ops / --max-request-bytes",
                reason="store_too_large",
            )
        with self._talking():
            try:
                txn.commit()
            except Retry:
                if txn.landed(self._key("ev", "")):  # a resent commit failed against itself
                    return  # (it is done)
                raise StoreRetry("state store: another writer changed what this one read") from None

    def _alone(self, work: Any, *args: Any) -> Any:
        """``work(*args)`` in the current block, or committed alone (retried on conflict)."""
        if self._writing:
            return work(*args)
        for _ in range(AUTOCOMMIT_ATTEMPTS):
            try:
                with self.writing():
                    return work(*args)
            except StoreRetry:
                continue
        raise StoreRetry(f"state store: lost to other writers {AUTOCOMMIT_ATTEMPTS} times")

    @contextlib.contextmanager
    def _talking(self) -> Iterator[None]:
        try:
            yield
        except etcdgw.Unavailable as exc:
            raise EnvironmentFailure(
                f"state store unavailable: {exc} — nothing was changed; check the etcd cluster "
                "(MEMKEEPER_STORE) and the network",
                reason="store_unavailable",
            ) from exc
        except etcdgw.EtcdError as exc:
            if exc.code == 11:  # the snapshot's revision was compacted meanwhile: start over
                raise StoreRetry(f"state store: {exc}") from exc
            raise EnvironmentFailure(f"state store: {exc}") from exc

    # -- keys and raw access ----------------------------------------------------------------

    def _key(self, table: str, *parts: str) -> bytes:
        return self.prefix + table.encode() + b"/" + "\0".join(parts).encode()

    def _get(self, key: bytes, *, track: bool = True) -> bytes | None:
        with self._talking():
            if self._txn is not None:
                return self._txn.get(key, track=track)
            found = self.gateway.range(key)[1]
        return found[0].value if found else None

    def _scan(
        self, start: bytes, end: bytes, *, limit: int = 0, descending: bool = False
    ) -> list[tuple[bytes, bytes]]:
        with self._talking():
            if self._txn is not None:
                return self._txn.scan(start, end, per_key=False, limit=limit, descending=descending)
            found = self.gateway.range(start, end, limit=limit, descending=descending)[1]
        return [(kv.key, kv.value) for kv in found]

    def _scan_prefix(
        self, prefix: bytes, *, limit: int = 0, descending: bool = False
    ) -> list[tuple[bytes, bytes]]:
        return self._scan(prefix, etcdgw.prefix_end(prefix), limit=limit, descending=descending)

    def _put(self, key: bytes, value: bytes) -> None:
        assert self._txn is not None
        self._txn.put(key, value)

    def _delete(self, key: bytes) -> None:
        assert self._txn is not None
        self._txn.delete(key)

    def _next_id(self, name: str) -> int:
        key = self._key("seq", name)
        last = self._get(key)
        value = 1 if last is None else int(last) + 1
        self._put(key, str(value).encode())
        return value

    # -- files and sections -----------------------------------------------------------------

    def file_state(self, path: str) -> FileState | None:
        raw = self._get(self._key("file", path))
        if raw is None:
            return None
        rev, hash_ = json.loads(raw)
        return FileState(rev, hash_)

    def _rows(self, path: str) -> dict[str, SectionRow]:
        key = self._key("sec", path)
        raw = self._get(key)
        if raw is None:
            return {}
        memo = self._decoded.get(key)
        if memo is not None and memo[0] == raw:
            return memo[1]
        rows = {k: _row(k, v) for k, v in json.loads(raw).items()}
        self._decoded[key] = (raw, rows)
        return rows

    def _present(self, path: str) -> list[SectionRow]:
        return sorted((r for r in self._rows(path).values() if r.present), key=lambda r: r.ord)

    def indexed_section(self, path: str, key: str) -> tuple[FileState, SectionRow] | None:
        """The file's state and one present section, read together (one snapshot)."""
        with self.reading():
            state = self.file_state(path)
            row = None if state is None else self._rows(path).get(key)
        if state is None or row is None or not row.present:
            return None
        return state, row

    def section_candidates(self, path: str, ref: str) -> list[tuple[FileState, SectionRow]]:
        """The file's state and each present section ``ref`` may name — its key, its base,
        or its key's last segment — in document order (``refs.resolve_key`` decides)."""
        with self.reading():
            state = self.file_state(path)
            rows = [] if state is None else self._present(path)
        if state is None:
            return []
        tail = "/" + ref
        return [(state, r) for r in rows if r.key == ref or r.base == ref or r.key.endswith(tail)]

    def splice_context(self, path: str, ord_: int) -> tuple[int, bytes | None]:
        """The size of the present sections before ``ord_`` and the heading of the one after."""
        rows = self._present(path)
        size = sum(len(r.heading) + len(r.body) for r in rows if r.ord < ord_)
        after = next((r.heading for r in rows if r.ord == ord_ + 1), None)
        return size, after

    def section_keys(self, path: str) -> list[tuple[str, str]]:
        """``(key, base)`` of the file's present sections in document order."""
        return [(r.key, r.base) for r in self._present(path)]

    def sections(self, path: str, *, with_absent: bool = False) -> list[SectionRow]:
        rows = [r for r in self._rows(path).values() if with_absent or r.present]
        return sorted(rows, key=lambda r: (not r.present, r.ord, r.key))

    def indexed_paths(self) -> list[str]:
        start = self._key("file", "")
        return [k[len(start) :].decode() for k, _ in self._scan_prefix(start)]

    def put_file(self, path: str, state: FileState) -> None:
        self._alone(self._put_file, path, state)

    def _put_file(self, path: str, state: FileState) -> None:
        self._put(self._key("file", path), _json([state.file_rev, state.file_hash]))

    def put_sections(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Insert or replace these section rows of ``path`` (and keep their bodies)."""
        self._alone(self._put_sections, path, list(rows))

    def _put_sections(self, path: str, rows: list[SectionRow]) -> None:
        current = dict(self._rows(path))
        for row in rows:
            old = current.get(row.key)
            if old is not None and old.present and not (row.present and row.rev == old.rev):
                self._keep_body(path, old.key, old.rev, old.body)  # it moves on from this body
            current[row.key] = row
        self._prune(path, rows)
        encoded = {k: _row_json(r) for k, r in current.items()}
        self._put(self._key("sec", path), _json(encoded))

    # -- bodies -----------------------------------------------------------------------------

    def keep_bodies(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Remember the body of each present row at its rev, forgetting those more than
        ``KEEP_BODIES`` revs older every ``PRUNE_EVERY`` revs (as ``proposaltables``)."""
        self._alone(self._keep_bodies, path, list(rows))

    def _keep_bodies(self, path: str, rows: list[SectionRow]) -> None:
        for row in rows:
            if row.present:
                self._keep_body(path, row.key, row.rev, row.body)
        self._prune(path, rows)

    def _keep_body(self, path: str, key: str, rev: int, body: bytes) -> None:
        """A body at a rev is that rev's for good: putting it again writes the same value,
        which spares the read an INSERT OR IGNORE would need (a round trip)."""
        self._put(self._key("body", path, key, _N.format(rev)), _json(_bytes_json(body)))

    def _prune(self, path: str, rows: list[SectionRow]) -> None:
        for row in rows:
            cut = row.rev - proposaltables.KEEP_BODIES  # read at each call, as SQLite's
            if row.present and cut > 0 and cut % proposaltables.PRUNE_EVERY == 0:
                start = self._key("body", path, row.key, "")
                end = self._key("body", path, row.key, _N.format(cut + 1))
                assert self._txn is not None
                self._txn.delete_range(start, end)

    def body_at(self, path: str, key: str, rev: int) -> bytes | None:
        """The section's body at ``rev``, if it is still kept."""
        with self.reading():
            raw = self._get(self._key("body", path, key, _N.format(rev)))
            if raw is not None:
                return _json_bytes(json.loads(raw))
            row = self._rows(path).get(key)
        return row.body if row is not None and row.present and row.rev == rev else None

    # -- events -----------------------------------------------------------------------------

    def append_event(
        self,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
    ) -> Event:
        """Chain a new event after the head (read in this transaction: concurrent appends
        conflict on it). Call inside ``writing()``."""
        result: Event = self._alone(self._append_event, ts, actor, type, path, section, data)
        return result

    def _append_event(
        self,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
    ) -> Event:
        head = self._key("cache", EVENTS_HEAD)
        raw = self._get(head)
        tail = None
        if raw is not None:
            head_id, _, head_hash = raw.decode().partition(" ")
            tail = int(head_id), head_hash
        event = ev.next_event(tail, ts, actor, type, path, section, data)
        number = _N.format(event.id)
        fields = [ts, actor, type, path, section, data, event.prev, event.hash]
        self._put(self._key("ev", number), _json(fields))
        self._put(head, f"{event.id} {event.hash}".encode())
        reason = data.get("reason")
        self._put(self._key("evt", type, ts, number), _json(reason))
        if path is not None:
            about = _about(section)
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

    def _event_at(self, key: bytes, raw: bytes) -> Event:
        ts, actor, type_, path, section, data, prev, hash_ = json.loads(raw)
        return Event(int(key[-20:]), ts, actor, type_, path, section, data, prev, hash_)

    def _events_by_id(self, ids: list[int]) -> list[Event]:
        """These events, in this order (one range when they lie close together)."""
        if not ids:
            return []
        low, high = min(ids), max(ids)
        found: dict[int, Event] = {}
        if len(ids) > 2 and high - low + 1 <= 4 * len(ids):
            start, end = self._key("ev", _N.format(low)), self._key("ev", _N.format(high + 1))
            for key, raw in self._scan(start, end):
                event = self._event_at(key, raw)
                found[event.id] = event
        else:
            for event_id in set(ids):
                key = self._key("ev", _N.format(event_id))
                got = self._get(key, track=False)  # events never change once written
                if got is not None:
                    found[event_id] = self._event_at(key, got)
        return [found[i] for i in ids if i in found]

    def last_event(self) -> Event | None:
        found = self._scan_prefix(self._key("ev", ""), limit=1, descending=True)
        return None if not found else self._event_at(*found[0])

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]:
        """Events with ``id > since``, oldest first."""
        if limit is not None and limit == 0:
            return []
        start = self._key("ev", _N.format(max(since, 0) + 1))
        end = etcdgw.prefix_end(self._key("ev", ""))
        count = 0 if limit is None or limit < 0 else limit
        return [self._event_at(k, v) for k, v in self._scan(start, end, limit=count)]

    def events_of(self, path: str, section: str | None, limit: int) -> list[Event]:
        """The last ``limit`` events about ``path`` (and ``section``; None: about the whole
        file), newest first."""
        if limit == 0:
            return []
        prefix = self._key("evp", path, _about(section), "")
        found = self._scan_prefix(prefix, limit=max(limit, 0), descending=True)
        with self.reading():
            return self._events_by_id([int(k[-20:]) for k, _ in found])

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
        return [(int(k[-20:]), v) for k, v in self._scan(start, end)]

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
            events = self._events_by_id([int(k[-20:]) for k, _ in found])
        return events[0] if events else None

    def data_version(self) -> int:
        """The cluster's revision: a change signal that costs one tiny read. It never goes
        back and moves with every write under the prefix — and with writes elsewhere in the
        cluster too, a false alarm that costs the poller one re-read (the exact revision of
        the prefix would be a range over all of it, sorted by revision, at every poll)."""
        with self._talking():
            return self.gateway.range(self._key("cache", EVENTS_HEAD), keys_only=True)[0]

    # -- small cache --------------------------------------------------------------------------

    def cached(self, key: str) -> str | None:
        raw = self._get(self._key("cache", key))
        return None if raw is None else raw.decode()

    def cache(self, key: str, value: str) -> None:
        """Remember a derived fact, inside the current transaction or in one of its own."""
        self._alone(self._put, self._key("cache", key), value.encode())

    # -- tallies --------------------------------------------------------------------------------

    def tally(self, kind: str, at: float, keep_s: float = 3600.0) -> None:
        """Count one ``kind`` occurrence at ``at``, forgetting those older than ``keep_s``.

        The forgetting is a blind range delete: a count in a concurrent block is not compared
        against it, which cannot matter — it only removes what is older than any count asks."""
        self._alone(self._tally, kind, at, keep_s)

    def _tally(self, kind: str, at: float, keep_s: float) -> None:
        cut = at - keep_s
        assert self._txn is not None
        if cut > 0:
            self._txn.delete_range(self._key("tally", kind, ""), self._key("tally", kind, _at(cut)))
        unique = os.urandom(6).hex()
        self._put(self._key("tally", kind, _at(at), unique), repr(at).encode())

    def tally_count(self, kind: str, since: float) -> int:
        start = self._key("tally", kind, _at(since)) if since > 0 else self._key("tally", kind, "")
        end = etcdgw.prefix_end(self._key("tally", kind, ""))
        return sum(1 for _, v in self._scan(start, end) if float(v) >= since)

    # -- claims, the queue and counters ---------------------------------------------------------

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
        return any(c.expires_at > now for c in self._lease_rows(_CLAIMS)[0])

    def claim_rows(self, expired_by: float | None = None) -> list[Claim]:
        """Every stored claim (expired ones stay until swept), or those expired by then, in
        token order."""
        claims = self._lease_rows(_CLAIMS)[0]
        return [c for c in claims if expired_by is None or c.expires_at <= expired_by]

    def claim_row(self, claim_id: str) -> Claim | None:
        raw = self._get(self._key("lease", _CLAIMS, claim_id))
        return None if raw is None else _claim(claim_id, raw)

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
            if kind == _CLAIMS:
                claims.append(_claim(ident, raw))
            elif kind == _WAITERS:
                waiters.append(_waiter(ident, raw))
        claims.sort(key=lambda c: c.token)
        waiters.sort(key=lambda w: w.request.arrival)
        return claims, waiters

    def put_claim(self, c: Claim) -> None:
        """Insert or replace claim ``c.id`` (its token is not checked for uniqueness: tokens
        come from ``bump``), its key held by an etcd lease (``_leased``)."""
        self._alone(self._put_claim, c)

    def _put_claim(self, c: Claim) -> None:
        key = self._key("lease", _CLAIMS, c.id)
        lease, granted = self._leased(key, c)
        fields = [c.token, c.agent, c.mode, list(c.targets), c.priority, c.strict]
        value = _json([*fields, c.granted_at, c.expires_at, c.objective, lease, granted])
        assert self._txn is not None
        self._txn.put(key, value, lease)

    def _leased(self, key: bytes, c: Claim) -> tuple[int, int]:
        """The etcd lease that holds claim ``c``'s key, and its TTL: the claim's own (from
        its grant to its expiry, whatever the clock memkeeper runs on) plus ``LEASE_GRACE_S``.
        memkeeper's sweeps expire a claim at its ``expires_at``, with a ``claim.expired``
        event; the lease removes the key even where no memkeeper runs any more (a fleet whose
        every machine died). A renewal within the lease's TTL is a keep-alive; a longer one
        takes a new lease and revokes the old one once the transaction has committed."""
        assert self._txn is not None
        want = max(1, math.ceil(c.expires_at - c.granted_at + LEASE_GRACE_S))
        txn = self._txn  # the row as this block left it (else as read: a lease operation
        raw = txn.writes[key] if key in txn.writes else txn.cache.get(key)  # read the claims)
        held = _claim_lease(raw) if raw is not None else None
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
        key = self._key("lease", _CLAIMS, claim_id)
        raw = self._get(key)
        held = _claim_lease(raw) if raw is not None else None
        if held is not None:
            self._after_commit.append(held[0])
        self._drop_lease_row(_CLAIMS, claim_id)

    def _drop_lease_row(self, table: str, ident: str) -> None:
        self._delete(self._key("lease", table, ident))
        self._put(self._key("lease", table, ""), os.urandom(8).hex().encode())  # the marker

    def earliest_expiry(self, now: float) -> float | None:
        """The soonest ``expires_at`` after ``now`` of the stored claims; None: none."""
        found = [c.expires_at for c in self._lease_rows(_CLAIMS)[0] if c.expires_at > now]
        return min(found, default=None)

    def put_waiter(self, w: WaiterRow) -> None:
        """Queue a request (ids come from ``bump``: a row of the same id is replaced, where
        SQLite's primary key would refuse it)."""
        self._alone(self._put, self._key("lease", _WAITERS, w.request.id), _waiter_json(w))

    def waiter_rows(self) -> list[WaiterRow]:
        """Every queued request, in arrival order."""
        return self._lease_rows(_WAITERS)[1]

    def settle_waiter(self, request_id: str, state: str, reason: str | None = None) -> None:
        """Record a queued request's outcome (none: nothing happens)."""
        self._alone(self._settle_waiter, request_id, state, reason)

    def _settle_waiter(self, request_id: str, state: str, reason: str | None) -> None:
        key = self._key("lease", _WAITERS, request_id)
        raw = self._get(key)
        if raw is not None:
            settled = _waiter(request_id, raw)._replace(state=state, reason=reason)
            self._put(key, _waiter_json(settled))

    def drop_waiter(self, request_id: str) -> None:
        self._alone(self._drop_lease_row, _WAITERS, request_id)

    # -- reconciliations ------------------------------------------------------------------------

    def open_reconciliation(
        self, path: str, region: str, human: str, generated: str, by: str, at: str
    ) -> tuple[Reconciliation, bool]:
        """The open reconciliation of a region, opened now (``True``) or refreshed with the
        latest texts (``False``): one region never has two open at once."""
        result: tuple[Reconciliation, bool] = self._alone(
            self._open_reconciliation, path, region, human, generated, by, at
        )
        return result

    def _open_reconciliation(
        self, path: str, region: str, human: str, generated: str, by: str, at: str
    ) -> tuple[Reconciliation, bool]:
        open_key = self._key("reco", path, region)
        found = self._get(open_key)
        if found is not None:
            existing = self.reconciliation(int(found))
            if existing is not None:
                refreshed = existing._replace(human=human, generated=generated)
                self._put(self._key("rec", _N.format(existing.id)), _json(list(refreshed)))
                return refreshed, False
        rec_id = self._next_id("rec")
        opened = Reconciliation(rec_id, path, region, human, generated, by, at, None, None, None)
        self._put(self._key("rec", _N.format(rec_id)), _json(list(opened)))
        self._put(open_key, str(rec_id).encode())
        return opened, True

    def reconciliations(
        self, *, resolved: bool = False, path: str | None = None
    ) -> list[Reconciliation]:
        """Open reconciliations by id (all of them with ``resolved=True``; only ``path``'s
        when given)."""
        out = []
        for _, raw in self._scan_prefix(self._key("rec", "")):
            rec = Reconciliation(*json.loads(raw))
            if (resolved or rec.resolution is None) and (path is None or rec.path == path):
                out.append(rec)
        return out

    def reconciliation(self, rec_id: int) -> Reconciliation | None:
        raw = self._get(self._key("rec", _N.format(rec_id)))
        return None if raw is None else Reconciliation(*json.loads(raw))

    def resolve_reconciliation(self, rec_id: int, resolution: str, by: str, at: str) -> None:
        self._alone(self._resolve_reconciliation, rec_id, resolution, by, at)

    def _resolve_reconciliation(self, rec_id: int, resolution: str, by: str, at: str) -> None:
        rec = self.reconciliation(rec_id)
        if rec is None or rec.resolution is not None:
            return
        done = rec._replace(resolution=resolution, resolved_by=by, resolved_at=at)
        self._put(self._key("rec", _N.format(rec_id)), _json(list(done)))
        open_key = self._key("reco", rec.path, rec.region)
        if self._get(open_key) == str(rec_id).encode():
            self._delete(open_key)

    # -- proposals ------------------------------------------------------------------------------

    def open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal:
        result: Proposal = self._alone(
            self._open_proposal, path, section, base_rev, body, agent, at
        )
        return result

    def _open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal:
        prop_id = self._next_id("prop")
        prop = Proposal(prop_id, path, section, base_rev, body, agent, at, "open", None, None, None)
        self._put(self._key("prop", _N.format(prop_id)), _proposal_json(prop))
        return prop

    def proposals(self, *, closed: bool = False) -> list[Proposal]:
        """Open proposals by id (closed ones too with ``closed=True``)."""
        found = [_proposal(raw) for _, raw in self._scan_prefix(self._key("prop", ""))]
        return [p for p in found if closed or p.state == "open"]

    def proposal(self, proposal_id: int) -> Proposal | None:
        raw = self._get(self._key("prop", _N.format(proposal_id)))
        return None if raw is None else _proposal(raw)

    def close_proposal(
        self, proposal_id: int, state: str, by: str, at: str, rev: int | None = None
    ) -> None:
        """Mark an open proposal ``applied`` (landing as ``rev``) or ``dropped``."""
        self._alone(self._close_proposal, proposal_id, state, by, at, rev)

    def _close_proposal(
        self, proposal_id: int, state: str, by: str, at: str, rev: int | None
    ) -> None:
        prop = self.proposal(proposal_id)
        if prop is None or prop.state != "open":
            return
        done = prop._replace(state=state, closed_by=by, closed_at=at, rev=rev)
        self._put(self._key("prop", _N.format(proposal_id)), _proposal_json(done))

    # -- pending writes -------------------------------------------------------------------------

    def put_pending(self, write: PendingWrite) -> None:
        """Record a replace about to happen (``write.seq`` is ignored: the store numbers it,
        from a counter: unlike SQLite's rowid, a seq is never reused after a drop)."""
        self._alone(self._put_pending, write)

    def _put_pending(self, write: PendingWrite) -> None:
        seq = self._next_id("pend")
        self._put(self._key("pend", write.path, _N.format(seq)), _json(list(write)[1:]))

    def _pending_rows(self, prefix: bytes) -> list[PendingWrite]:
        if self._writing:  # compared at commit: every drop changes it
            self._get(self._key("gen", "pend"))
        return [PendingWrite(int(k[-20:]), *json.loads(v)) for k, v in self._scan_prefix(prefix)]

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


# -- values ------------------------------------------------------------------------------------

_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _json(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()


def _bytes_json(data: bytes) -> Any:
    """Bytes as JSON: the text when they are UTF-8 (memkeeper indexes only UTF-8), else
    ``{"b64": …}``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": etcdgw.b64(data)}


def _json_bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    return base64.b64decode(value["b64"])


def _row_json(r: SectionRow) -> list[Any]:
    heading, body = _bytes_json(r.heading), _bytes_json(r.body)
    return [r.ord, r.rev, r.hash, r.present, r.title, r.level, r.base, heading, body, r.lines]


def _row(key: str, v: list[Any]) -> SectionRow:
    ord_, rev, hash_, present, title, level, base, heading, body, lines = v
    return SectionRow(
        key, ord_, rev, hash_, present, title, level, base, _json_bytes(heading),
        _json_bytes(body), lines,
    )  # fmt: skip


def _proposal_json(p: Proposal) -> bytes:
    values = list(p)
    values[4] = _bytes_json(p.body)
    return _json(values)


def _proposal(raw: bytes) -> Proposal:
    values = json.loads(raw)
    values[4] = _json_bytes(values[4])
    return Proposal(*values)


def _about(section: str | None) -> str:
    """An event's section in an index key: ``-`` for the whole file, ``+KEY`` for one."""
    return "-" if section is None else "+" + section


def _at(seconds: float) -> str:
    return f"{seconds:020.6f}"


def _claim_lease(raw: bytes) -> tuple[int, int] | None:
    """The etcd lease id and TTL a claim's row names (None: a row from before leases)."""
    fields = json.loads(raw)
    return (int(fields[9]), int(fields[10])) if len(fields) >= 11 and fields[9] else None


def _claim(claim_id: str, raw: bytes) -> Claim:
    from memkeeper.claims.decisions import Claim  # not on the read/patch path

    token, agent, mode, targets, priority, strict, granted, expires, objective = json.loads(raw)[:9]
    return Claim(
        claim_id, int(token), agent, mode, tuple(targets), int(priority), bool(strict),
        float(granted), float(expires), objective,
    )  # fmt: skip


def _waiter_json(w: WaiterRow) -> bytes:
    r = w.request
    request = [r.arrival, r.agent, r.mode, list(r.targets), r.priority, r.strict, r.ttl]
    return _json([*request, r.objective, w.pid, w.deadline, w.state, w.reason])


def _waiter(request_id: str, raw: bytes) -> WaiterRow:
    from memkeeper.claims.decisions import Request
    from memkeeper.claims.waiters import WaiterRow  # not on the read/patch path

    arrival, agent, mode, targets, priority, strict, ttl, objective, *rest = json.loads(raw)
    request = Request(
        request_id, agent, mode, tuple(targets), int(priority), bool(strict), float(ttl),
        objective, int(arrival),
    )  # fmt: skip
    pid, deadline, state, reason = rest
    return WaiterRow(request, int(pid), float(deadline), state, reason)
