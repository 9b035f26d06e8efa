"""The local state store: revisions, section texts, the event log, claims and the rest of a
root's state, in SQLite under ``.memkeeper/`` — the only SQL in memkeeper.

``Store`` is the core (``core``: the connection, ``BEGIN IMMEDIATE`` transactions, the WAL's
group commit, the cache) with one mixin per domain of ``store.protocol``: ``files`` (files,
sections, bodies), ``events`` (the chain, tallies), ``claims`` (claims, waiters, counters),
``proposals``, ``reconciliations``, ``pending``, ``mail``, ``reads``, ``meetings`` and
``work``; ``stamps`` (``stamp_table``) keeps this checkout's files' stat stamps, a
``StampStore`` on the same connection, loaded only by the looks that use it; ``schema`` holds the
tables and their version.
"""

from __future__ import annotations

from memkeeper.fs.home import prepare_home
from memkeeper.store.sqlite.claims import ClaimRows
from memkeeper.store.sqlite.events import EventRows
from memkeeper.store.sqlite.files import FileRows
from memkeeper.store.sqlite.mail import MailRows
from memkeeper.store.sqlite.meetings import MeetingRows
from memkeeper.store.sqlite.pending import PendingRows
from memkeeper.store.sqlite.proposals import ProposalRows
from memkeeper.store.sqlite.reads import ReadRows
from memkeeper.store.sqlite.reconciliations import ReconciliationRows
from memkeeper.store.sqlite.work import WorkRows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.store.sqlite.stamps import StampTable

__all__ = ["Store", "prepare_home"]


class Store(
    FileRows,
    EventRows,
    ClaimRows,
    ProposalRows,
    ReconciliationRows,
    PendingRows,
    MailRows,
    ReadRows,
    MeetingRows,
    WorkRows,
):
    """One connection to the memory home's database, with every domain's tables."""

    def stamp_table(self) -> StampTable:
        """This checkout's files' stat stamps, on this connection (``stamps``)."""
        from memkeeper.store.sqlite.stamps import StampTable

        return StampTable(self._db, self._wal)
