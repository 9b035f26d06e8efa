"""The etcd store's core: its gateway, its transactions, its format check, the raw access to
keys every domain builds on, and the small cache: the package assembles the core and the
mixins of the domains a read or a patch uses (``files``, ``events``, ``claims``, ``pending``,
``reads``) into ``EtcdStore``; the others are an ``EtcdDomain`` each, loaded on first use.

Transactions. ``writing()`` runs its block in one ``stm.Txn``: every read sees one snapshot
(the revision of its first read), every write is buffered (and seen by the block's later
reads), and the block's end commits it all in one etcd transaction that compares every key
and range the block read. If another writer changed any of them since, nothing is applied and
``StoreRetry`` is raised: the caller re-runs the whole operation (``Workspace.retrying``
will). ``reading()`` is the same snapshot without a commit; outside both, each read is a plain
(linearizable) range, and each writing method commits alone in a transaction of its own,
retried on conflict (``AUTOCOMMIT_ATTEMPTS``) — the equivalent of SQLite's autocommit. When no
member answers, every method raises ``StoreUnavailable`` (an ``EnvironmentFailure``,
``reason="store_unavailable"``).

The format. The first time a store talks to etcd it reads ``P/format`` (``keys``): a prefix
without it — new, or written by a memkeeper from before the key — gets this release's
``FORMAT_VERSION`` (put only if still absent: one of two first users wins, the other reads
it), and so does one of a version ``keys.UPGRADES`` lists (put only if still that); a
prefix of another version is refused with an ``EnvironmentFailure`` saying what to do,
as SQLite's store refuses a newer schema. One read per store (per process, for the CLI).

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

import contextlib
import time

from memkeeper.errors import EnvironmentFailure
from memkeeper.store.errors import StoreRefused, StoreUnavailable
from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd import keys, recordindex, typeindex
from memkeeper.store.etcd.gateway import Compare, Gateway
from memkeeper.store.etcd.keys import EVENTS_HEAD, FORMAT_VERSION, UPGRADES
from memkeeper.store.etcd.stm import ReadChanged, Txn
from memkeeper.store.retry import Retry, StoreRetry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, Self

    from memkeeper.records import SectionRow

MAX_TXN_OPS = 128  # etcd's --max-txn-ops default: operations, and comparisons, per txn
MAX_REQUEST_BYTES = 1536 * 1024  # etcd's --max-request-bytes default
REQUEST_MARGIN = 64 * 1024  # for the request's framing and the comparisons
OP_OVERHEAD = 32  # bytes a put costs beyond its key and value
AUTOCOMMIT_ATTEMPTS = 50
# Pauses before asking whether a commit no member answered landed (~2 s in all).
SILENCE_PAUSES_S = (0.2, 0.5, 1.2)


class EtcdCore:
    """The state of one memory home (or a fleet of them) under ``prefix`` on an etcd cluster."""

    def __init__(self, gateway: Gateway, prefix: bytes) -> None:
        self.gateway = gateway
        self.prefix = prefix if prefix.endswith(b"/") else prefix + b"/"
        self._txn: Txn | None = None  # the snapshot of the current reading() or writing()
        self._writing = False
        self._decoded: dict[bytes, tuple[bytes, dict[str, SectionRow]]] = {}
        self._after_commit: list[int] = []  # leases to revoke once the transaction commits
        self._format_checked = False
        self._claims_at: float | None = None  # the block's claims' time (``claim_time``)
        # The pause before asking again whether a silent commit landed (tests skip it).
        self._sleep: Callable[[float], None] = time.sleep

    @classmethod
    def open(cls, endpoints: str, prefix: str, access: etcdgw.Access | None = None) -> Self:
        """A store on the cluster at ``HOST:PORT[,HOST:PORT…]`` under ``prefix``, reached
        as ``access`` says (by default plain HTTP, without authentication)."""
        gateway = Gateway(etcdgw.parse_endpoints(endpoints), access=access)
        return cls(gateway, prefix.encode())

    def close(self) -> None:
        self.gateway.close()

    def trim_log(self, limit: int = 0) -> None:
        """Nothing to trim: etcd compacts its own log (the SQLite store's is a WAL file)."""

    def check_format(self) -> None:
        """Make sure the prefix holds this release's layout (the module's "The format"): put
        ``FORMAT_VERSION`` where there is none yet; refuse any other. The store's first request
        to etcd does it; this checks again."""
        self._format_checked = False
        with self._talking():
            pass

    def _check_format(self) -> None:
        key = keys.format_key(self.prefix)
        found = self.gateway.range(key)[1]
        ours = str(FORMAT_VERSION).encode()
        for older in UPGRADES:  # a layout this one extends: mark the prefix as ours
            if found and found[0].value == older:
                if older < b"5":  # claim records not indexed by state yet
                    recordindex.backfill(self.gateway, self.prefix)
                was = Compare(key, "VALUE", "EQUAL", older)
                typeindex.mark(self.gateway, self.prefix, was, ours)
                found = self.gateway.range(key)[1]
        if not found:
            first = Compare(key, "VERSION", "EQUAL", 0)
            marked = typeindex.mark(self.gateway, self.prefix, first, ours)
            found = [] if marked else self.gateway.range(key)[1]
        if found and found[0].value != ours:
            text = found[0].value.decode("utf-8", "replace")
            raise EnvironmentFailure(
                f"the shared store {self._where()} has format version {text}, this "
                f"memkeeper knows {FORMAT_VERSION} — upgrade memkeeper, or name another prefix "
                "(MEMKEEPER_STORE, or the policy's store:)"
            )
        self._format_checked = True

    def _where(self) -> str:
        """The store as its name spells it: ``etcd[s]://HOST:PORT,…/PREFIX``."""
        scheme = "etcd" if self.gateway.access.context is None else "etcds"
        where = ",".join(f"{host}:{port}" for host, port in self.gateway.endpoints)
        return f"{scheme}://{where}{self.prefix.decode('utf-8', 'replace').rstrip('/')}"

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
        self._claims_at = None
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
        first — its file and section rows, the events' head, the claims (and the queue, in
        the same range) — instead of one round trip each as the operation asks for them."""
        if self._txn is None:
            return
        leases = self._key("lease", "")
        wanted = [self._key("file", path), self._key("sec", path), self._key("cache", EVENTS_HEAD)]
        with self._talking():
            self._txn.prefetch(wanted, [(leases, etcdgw.prefix_end(leases))])

    def prefetch_files(self, paths: list[str]) -> None:
        """Inside ``writing()``: read the file and section rows of every one of ``paths``
        (a batch of files indexed at once, ``ops.bulkindex``) in one round trip per
        ``MAX_TXN_OPS`` keys, instead of two round trips a file."""
        if self._txn is None:
            return
        wanted = [self._key(kind, path) for path in paths for kind in ("file", "sec")]
        with self._talking():
            for start in range(0, len(wanted), MAX_TXN_OPS):
                self._txn.prefetch(wanted[start : start + MAX_TXN_OPS])

    def prefetch_claims(self) -> None:
        """Inside ``writing()``: read in one round trip what a lease operation reads first —
        the claims and the queue, the request and token counters, the events' head, the
        meetings that serialize (``serializing_meetings``, asked when a claim changed)."""
        if self._txn is None:
            return
        leases, turns = self._key("lease", ""), self._key("meetser", "")
        counters = [self._key("ctr", name) for name in ("request", "token")]
        with self._talking():
            self._txn.prefetch(
                [*counters, self._key("cache", EVENTS_HEAD)],
                [(leases, etcdgw.prefix_end(leases)), (turns, etcdgw.prefix_end(turns))],
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
            failovers = self.gateway.failovers
            try:
                txn.commit()
            except ReadChanged:
                # A resent commit that failed against itself is done.
                if txn.landed(self._key("ev", "")):
                    return
                # Handed on to another member meanwhile (a leader lost): perhaps against a
                # copy of itself that did land with nothing to tell it by — not a lost race.
                raise StoreRetry(
                    "state store: another writer changed what this one read",
                    lost=self.gateway.failovers == failovers,
                ) from None
            except etcdgw.Unavailable as exc:
                if not exc.sent:
                    raise
                self._after_silence(txn, exc)

    def _after_silence(self, txn: Txn, silence: etcdgw.Unavailable) -> None:
        """A commit went out and no answer came back in time: a member may have applied it
        (or apply it still). Never "nothing was changed" then: ask whether it landed, a few
        times over ~2 s — landed, it is done; not landed (its event is not there: and it can
        no longer land, since whatever runs next compares the same keys), the block runs
        again; no answer at all, the outcome is unknown and the error says so."""
        unique = self._key("ev", "")
        if any(key.startswith(unique) for key in txn.writes):
            for pause in SILENCE_PAUSES_S:
                self._sleep(pause)
                try:
                    landed = txn.landed(unique)
                except etcdgw.Unavailable:
                    continue
                if landed:
                    return
                raise StoreRetry(
                    "state store: a commit no member answered did not land", lost=False
                )
        raise StoreUnavailable(
            f"state store: the change was sent and no member answered ({silence}): it may "
            "have landed — read what you changed (or `memkeeper events`) before trying again",
            outcome="unknown",
        ) from silence

    def _alone(self, work: Any, *args: Any) -> Any:
        """``work(*args)`` in the current block, or committed alone (retried on conflict)."""
        if self._writing:
            return work(*args)
        autocommit = Retry(
            AUTOCOMMIT_ATTEMPTS,
            give_up=lambda _: StoreRetry(
                f"state store: lost to other writers {AUTOCOMMIT_ATTEMPTS} times"
            ),
        )
        return autocommit(self._committed, work, *args)

    def _committed(self, work: Any, *args: Any) -> Any:
        with self.writing():
            return work(*args)

    @contextlib.contextmanager
    def _talking(self) -> Iterator[None]:
        try:
            if not self._format_checked:
                self._check_format()
            yield
        except etcdgw.Refused as exc:
            raise StoreRefused(
                f"state store {self._where()} refused memkeeper (nothing was changed): {exc}"
            ) from exc
        except etcdgw.Unavailable as exc:
            raise StoreUnavailable(
                f"state store unavailable: {exc} — nothing was changed; check the etcd cluster "
                "(MEMKEEPER_STORE) and the network"
            ) from exc
        except etcdgw.EtcdError as exc:
            # The snapshot's revision was compacted meanwhile: start over.
            if exc.code == 11:
                raise StoreRetry(f"state store: {exc}", lost=False) from exc
            raise EnvironmentFailure(f"state store: {exc}") from exc

    def data_version(self) -> int:
        """The cluster's revision: a change signal that costs one tiny read. It never goes
        back and moves with every write under the prefix — and with writes elsewhere in the
        cluster too, a false alarm that costs the poller one re-read (the exact revision of
        the prefix would be a range over all of it, sorted by revision, at every poll)."""
        with self._talking():
            return self.gateway.range(self._key("cache", EVENTS_HEAD), keys_only=True)[0]

    # -- keys and raw access ----------------------------------------------------------------

    def _key(self, table: str, *parts: str) -> bytes:
        return keys.key(self.prefix, table, *parts)

    def _get(self, key: bytes, *, track: bool = True) -> bytes | None:
        with self._talking():
            if self._txn is not None:
                return self._txn.get(key, track=track)
            found = self.gateway.range(key)[1]
        return found[0].value if found else None

    def _scan(
        self,
        start: bytes,
        end: bytes,
        *,
        limit: int = 0,
        descending: bool = False,
        track: bool = True,
    ) -> list[tuple[bytes, bytes]]:
        with self._talking():
            if self._txn is not None:
                return self._txn.scan(
                    start, end, per_key=False, limit=limit, descending=descending, track=track
                )
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

    # -- small cache --------------------------------------------------------------------------

    def cached(self, key: str) -> str | None:
        raw = self._get(self._key("cache", key))
        return None if raw is None else raw.decode()

    def cache(self, key: str, value: str) -> None:
        """Remember a derived fact, inside the current transaction or in one of its own."""
        self._alone(self._put, self._key("cache", key), value.encode())


class EtcdDomain:
    """A domain loaded on first use (``EtcdStore.proposals``, ``EtcdStore.mail`` …), not a
    mixin of ``EtcdStore``: its keys, read and written through the store's core, so in the
    transaction the store has open (``writing()``, ``reading()``) or, outside one, each
    writing method in a transaction of its own (``_alone``)."""

    def __init__(self, core: EtcdCore) -> None:
        self._core = core
