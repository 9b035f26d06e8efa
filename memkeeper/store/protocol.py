"""The state store's interface, one ``Protocol`` per domain, and ``StateStore``, all of them
with the transactions: what ``store.sqlite.Store`` and ``store.etcd.EtcdStore`` both offer,
and all that ``ops/``, the daemon and the hooks may call on a store they are given.

Each domain is one module in each backend (``store/sqlite/<domain>.py``,
``store/etcd/<domain>.py``) and one contract file (``tests/store/contract/test_<domain>.py``);
``tests/test_architecture.py`` checks that both backends implement every protocol here, by
name and signature, and mypy checks it wherever a ``StateStore`` is declared. A new domain —
a work queue, a mailbox — is a protocol here, a module in each backend and a contract file;
unless a read or a patch uses it, it is an attribute of the store, not a mixin
(``store.work.add_work(…)``), so that its module is loaded only by the commands that use it
(docs/architecture.md, "Start-up").

Where the in-between methods went:

- the bodies of sections (the bases of three-way merges) and the versions of files are
  ``FileStore``'s: ``put_sections`` keeps a section's bodies in the same statements, and a
  version names a file's ``file_rev``; proposals, the merges that could not land, are
  ``ProposalStore``'s alone;
- tallies — counts of occurrences not worth an event, read over a window as events are — are
  ``EventStore``'s;
- the cache of derived facts is ``StateStore``'s own, beside the transactions: any domain may
  keep a fact there (the events' head, the policy's verdicts), and SQLite's keeps it in the
  transaction it is given or in one of its own;
- the prefetches are ``StateStore``'s too: they belong to a transaction (``writing()``), not
  to one domain's keys.

Write inside ``writing()``; a method called outside one commits alone (SQLite's autocommit,
etcd's transaction of its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from contextlib import AbstractContextManager

    from memkeeper.checkpoints import Checkpoint
    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.clock import Clock
    from memkeeper.coordination import Message, Proposal, Reconciliation, StaleRead
    from memkeeper.events import Sign
    from memkeeper.meetings.records import Meeting
    from memkeeper.records import Event, FileState, PendingWrite, SectionRow
    from memkeeper.stamps import Stamped
    from memkeeper.work.items import Item


class FileStore(Protocol):
    """Files and their sections — each file's state, its section rows, each section's recent
    bodies — and the versions a shared store remembers of each file."""

    def file_state(self, path: str) -> FileState | None: ...

    def indexed_section(self, path: str, key: str) -> tuple[FileState, SectionRow] | None: ...

    def section_candidates(self, path: str, ref: str) -> list[tuple[FileState, SectionRow]]: ...

    def splice_context(self, path: str, ord_: int) -> tuple[int, bytes | None]: ...

    def section_keys(self, path: str) -> list[tuple[str, str]]: ...

    def section_row(self, path: str, key: str) -> SectionRow | None: ...

    def sections(self, path: str, *, with_absent: bool = False) -> list[SectionRow]: ...

    def indexed_paths(self) -> list[str]: ...

    def file_hashes(self) -> dict[str, str]: ...

    def section_counts(self, paths: Iterable[str]) -> dict[str, int]: ...

    def put_file(self, path: str, state: FileState) -> None: ...

    def put_sections(self, path: str, rows: Iterable[SectionRow]) -> None: ...

    def keep_bodies(self, path: str, rows: Iterable[SectionRow]) -> None: ...

    def body_at(self, path: str, key: str, rev: int) -> bytes | None: ...

    def keep_version(self, path: str, file_hash: str, file_rev: int) -> None: ...

    def version_rev(self, path: str, file_hash: str) -> int | None: ...


class EventStore(Protocol):
    """The hash-chained event log, its checkpoints and compaction, and tallies."""

    def append_event(
        self,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        sign: Sign | None = None,
    ) -> Event: ...

    def events_head(self) -> tuple[int, str] | None: ...

    def last_event(self) -> Event | None: ...

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]: ...

    def events_of(self, path: str, section: str | None, limit: int) -> list[Event]: ...

    def last_events(self, path: str) -> dict[str | None, Event]: ...

    def events_typed(self, types: tuple[str, ...], since_ts: str) -> list[Event]: ...

    def recent_events(
        self, types: Sequence[str], path: str | None, before: int | None, limit: int
    ) -> list[Event]: ...

    def count_events(self, type: str, since_ts: str, reason: str | None = None) -> int: ...

    def last_claim_event(self, claim_id: str) -> Event | None: ...

    def tally(self, kind: str, at: float, keep_s: float = 3600.0) -> None: ...

    def tally_count(self, kind: str, since: float) -> int: ...

    # The chain's checkpoints (``checkpoints``: one ``verified``, one ``compacted``), and the
    # compaction of the log's oldest events.
    def chain_checkpoint(self, kind: str) -> Checkpoint | None: ...

    def put_chain_checkpoint(self, cp: Checkpoint) -> None: ...

    def compact_events(self, through: int) -> int: ...


class ClaimStore(Protocol):
    """Claims, queued requests (waiters) and counters (fencing tokens, arrivals), the clock
    claims are judged by, and every claim's record (``claims.lifecycle``), kept after it
    ends; the live claims stay a table of their own, all the hot paths read."""

    def claim_time(self, clock: Clock) -> float: ...

    def bump(self, counter: str) -> int: ...

    def any_live_claim(self, now: Callable[[], float]) -> bool:
        """Whether a claim is live at ``now()``, the claims' time (``Workspace.claim_now``),
        which is asked only when a claim is stored: where nobody claims, no clock is read."""
        ...

    def claim_rows(self, expired_by: float | None = None) -> list[Claim]: ...

    def claim_row(self, claim_id: str) -> Claim | None: ...

    def claim_table(self) -> tuple[list[Claim], list[WaiterRow]]: ...

    def put_claim(self, c: Claim) -> None: ...

    def drop_claim(self, claim_id: str) -> None: ...

    def earliest_expiry(self, now: float) -> float | None: ...

    def put_waiter(self, w: WaiterRow) -> None: ...

    def waiter_rows(self) -> list[WaiterRow]: ...

    def settle_waiter(self, request_id: str, state: str, reason: str | None = None) -> None: ...

    def drop_waiter(self, request_id: str) -> None: ...

    def wake_waiters(self, request_ids: Sequence[str]) -> None:
        """Inside ``writing()``: wake those queued requests' processes on any machine once it
        commits (etcd: a wake key each, which their watch sees; SQLite: nothing — their
        machine's FIFOs are poked after the commit)."""
        ...

    def put_claim_record(self, r: ClaimRecord) -> None: ...

    def add_claim_record(self, id: str, state: str, agent: str, rev: int, body: str) -> bool: ...

    def claim_record(self, claim_id: str) -> ClaimRecord | None: ...

    def claim_records(self, states: Sequence[str] = ()) -> list[ClaimRecord]: ...


class ProposalStore(Protocol):
    """Proposals: the bodies of merges that could not land, until applied or dropped."""

    def open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal: ...

    def proposals(self, *, closed: bool = False) -> list[Proposal]: ...

    def proposal(self, proposal_id: int) -> Proposal | None: ...

    def close_proposal(
        self, proposal_id: int, state: str, by: str, at: str, rev: int | None = None
    ) -> None: ...


class ReconciliationStore(Protocol):
    """Reconciliations: hand edits of generated regions (and diverged files), until resolved."""

    def open_reconciliation(
        self, path: str, region: str, human: str, generated: str, by: str, at: str
    ) -> tuple[Reconciliation, bool]: ...

    def reconciliations(
        self, *, resolved: bool = False, path: str | None = None
    ) -> list[Reconciliation]: ...

    def reconciliation(self, rec_id: int) -> Reconciliation | None: ...

    def resolve_reconciliation(self, rec_id: int, resolution: str, by: str, at: str) -> None: ...


class PendingStore(Protocol):
    """Pending writes: file replaces committed before they happen on disk."""

    def put_pending(self, write: PendingWrite) -> None: ...

    def pending(self, path: str) -> list[PendingWrite]: ...

    def pending_count(self, path: str) -> tuple[int, float | None]: ...

    def pending_paths(self, before: float) -> list[str]: ...

    def drop_pending(self, path: str) -> None: ...


class MailStore(Protocol):
    """Messages to identities (or to ``all``), and what each recipient was told and
    acknowledged: a message's ``m:ID``, or a computed notice's key."""

    def post_message(
        self, sender: str, to: str, kind: str, about: str | None, text: str, at: str
    ) -> Message: ...

    def message(self, message_id: int) -> Message | None: ...

    def messages_for(self, recipient: str, *, acked: bool = False) -> list[Message]: ...

    def mark_delivered(self, recipient: str, marks: Sequence[str], at: str) -> list[str]: ...

    def ack_message(self, recipient: str, message_id: int, at: str) -> bool: ...

    def kept_messages(self) -> list[tuple[int, str, str, bool, str, str | None]]: ...

    def drop_messages(self, message_ids: Sequence[int], notices_before: str) -> None: ...


class ReadStore(Protocol):
    """What each identity last read of each section (its rev), and the last rev it was told
    the section changed to: one small row per (identity, path, key), no event."""

    def reads_of(self, reader: str, path: str) -> dict[str, int]: ...

    def record_reads(self, reader: str, path: str, revs: Mapping[str, int]) -> None: ...

    def stale_reads(self, reader: str) -> list[StaleRead]: ...

    def tell_read(self, reader: str, path: str, key: str, rev: int) -> bool: ...


class MeetingStore(Protocol):
    """Meetings: overlaps between agents' claims, each one record whose ``rev`` the caller
    compares inside ``writing()`` before it puts the next one (compare-and-swap)."""

    def add_meeting(self, m: Meeting) -> Meeting: ...

    def meeting(self, meeting_id: int) -> Meeting | None: ...

    def meetings(self, *, resolved: bool = False) -> list[Meeting]: ...

    def serializing_meetings(self) -> list[Meeting]: ...

    def put_meeting(self, m: Meeting) -> None: ...

    def kept_meetings(self) -> list[tuple[int, float | None]]: ...

    def drop_meetings(self, ids: Sequence[int]) -> None: ...


class WorkStore(Protocol):
    """Work items: one record each, kept after it ends, whose ``rev`` the caller compares
    inside ``writing()`` before it puts the next one; ``work next`` reads them with the
    claims and grants in the same transaction."""

    def add_work(self, item: Item) -> Item: ...

    def work_item(self, item_id: int) -> Item | None: ...

    def work_items(self, states: Sequence[str] = ()) -> list[Item]: ...

    def put_work(self, item: Item) -> None: ...

    def done_work(self) -> list[tuple[int, float | None]]: ...

    def drop_work(self, ids: Sequence[int]) -> None: ...


class StampStore(Protocol):
    """This checkout's files' stat stamps (``memkeeper.stamps``): what the files on this
    machine looked like when memkeeper last read them, so a look at the whole repository reads
    only those that moved. Not shared state and not a domain of ``StateStore``: SQLite's
    ``Store.stamp_table()`` keeps them in its ``stamps`` table; with a shared store,
    ``fs.stampfile`` keeps them in the memory home, beside it. A cache: a stamp lost costs one
    read."""

    def stamps(self) -> dict[str, Stamped]: ...

    def put_stamps(self, rows: Sequence[Stamped]) -> None: ...


class StateStore(FileStore, EventStore, ClaimStore, PendingStore, ReadStore, Protocol):
    """A whole store: every domain, and the transactions, prefetches and cache they share. The
    domains a read or a patch uses are the store's own methods; each of the others is an
    attribute of the store named after its module, whose module is loaded on first use (every
    process pays for each module it imports): ``store.mail.post_message(…)``."""

    @property
    def proposals(self) -> ProposalStore: ...

    @property
    def reconciliations(self) -> ReconciliationStore: ...

    @property
    def mail(self) -> MailStore: ...

    @property
    def meetings(self) -> MeetingStore: ...

    @property
    def work(self) -> WorkStore: ...

    def writing(self, *, durable: bool = True) -> AbstractContextManager[None]: ...

    def reading(self) -> AbstractContextManager[None]: ...

    def close(self) -> None: ...

    def trim_log(self, limit: int = ...) -> None: ...

    def prefetch_file(self, path: str) -> None: ...

    def prefetch_files(self, paths: list[str]) -> None: ...

    def prefetch_claims(self) -> None: ...

    def data_version(self) -> int: ...

    def cached(self, key: str) -> str | None: ...

    def cache(self, key: str, value: str) -> None: ...


# The module that holds each domain in each backend (``store/<backend>/<module>.py``; a
# domain that is an attribute of ``StateStore`` is reached as ``store.<module>``); the
# transactions, prefetches and cache, ``StateStore``'s own, are each backend's ``core``.
DOMAINS: dict[str, type[Any]] = {
    "files": FileStore,
    "events": EventStore,
    "claims": ClaimStore,
    "proposals": ProposalStore,
    "reconciliations": ReconciliationStore,
    "pending": PendingStore,
    "mail": MailStore,
    "reads": ReadStore,
    "meetings": MeetingStore,
    "work": WorkStore,
}
