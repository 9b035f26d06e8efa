"""The local state store: revisions, section texts, the event log, claims and the rest of a
root's state, in SQLite under ``.memkeeper/`` — the only SQL in memkeeper.

``Store`` is the core (``core``: the connection, ``BEGIN IMMEDIATE`` transactions, the WAL's
group commit, the cache) with one mixin per domain a read or a patch may use (``store.protocol``):
``files`` (files, sections, bodies), ``events`` (the chain, tallies), ``claims`` (claims,
waiters, counters), ``pending`` and ``reads``. The other domains are loaded on first use, each
a ``SqliteDomain`` on the same connection: ``Store.proposals``, ``Store.reconciliations``,
``Store.mail``, ``Store.meetings`` and ``Store.work`` (every process pays for each module it
imports, and those of a read or a patch use none of them). ``stamps`` (``stamp_table``) keeps
this checkout's files' stat stamps, a ``StampStore`` on the same connection, loaded only by the
looks that use it; ``schema`` holds the tables and their version.
"""

from __future__ import annotations

from memkeeper.fs.home import prepare_home
from memkeeper.store.sqlite.claims import ClaimRows
from memkeeper.store.sqlite.events import EventRows
from memkeeper.store.sqlite.files import FileRows
from memkeeper.store.sqlite.pending import PendingRows
from memkeeper.store.sqlite.reads import ReadRows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.store.sqlite.mail import MailRows
    from memkeeper.store.sqlite.meetings import MeetingRows
    from memkeeper.store.sqlite.proposals import ProposalRows
    from memkeeper.store.sqlite.reconciliations import ReconciliationRows
    from memkeeper.store.sqlite.stamps import StampTable
    from memkeeper.store.sqlite.work import WorkRows

__all__ = ["Store", "prepare_home"]


class Store(FileRows, EventRows, ClaimRows, PendingRows, ReadRows):
    """One connection to the memory home's database, with every domain's tables."""

    @property
    def proposals(self) -> ProposalRows:
        """The merges that could not land (``proposals``), on this connection."""
        from memkeeper.store.sqlite.proposals import ProposalRows

        return ProposalRows(self._db)

    @property
    def reconciliations(self) -> ReconciliationRows:
        """Hand edits of generated regions (``reconciliations``), on this connection."""
        from memkeeper.store.sqlite.reconciliations import ReconciliationRows

        return ReconciliationRows(self._db)

    @property
    def mail(self) -> MailRows:
        """Messages and what each recipient was told (``mail``), on this connection."""
        from memkeeper.store.sqlite.mail import MailRows

        return MailRows(self._db)

    @property
    def meetings(self) -> MeetingRows:
        """Meetings on overlapping claims (``meetings``), on this connection."""
        from memkeeper.store.sqlite.meetings import MeetingRows

        return MeetingRows(self._db)

    @property
    def work(self) -> WorkRows:
        """Work items (``work``), on this connection."""
        from memkeeper.store.sqlite.work import WorkRows

        return WorkRows(self._db)

    def stamp_table(self) -> StampTable:
        """This checkout's files' stat stamps, on this connection (``stamps``)."""
        from memkeeper.store.sqlite.stamps import StampTable

        return StampTable(self._db, self._wal)
