"""The shared state store on etcd (reference §12): the same domains as SQLite's store
(``store.protocol``), under one key prefix of an etcd cluster that every root naming it shares.

``EtcdStore`` is the core (``core``: the gateway, optimistic transactions on ``stm``, the
format check, raw access to keys, the cache) with one mixin per domain a read or a patch may
use: ``files`` (files, sections, bodies, versions), ``events`` (the chain, tallies), ``claims``
(claims held by etcd leases, waiters, counters), ``pending`` and ``reads``. The other domains
are loaded on first use, each an ``EtcdDomain`` through the same core: ``EtcdStore.proposals``,
``EtcdStore.reconciliations``, ``EtcdStore.mail``, ``EtcdStore.meetings`` and
``EtcdStore.work``. ``keys`` is the key layout and its format version, ``codec`` the values,
``gateway`` the client of etcd's JSON gateway.
"""

from __future__ import annotations

from memkeeper.store.etcd.claims import ClaimKeys
from memkeeper.store.etcd.events import EventKeys
from memkeeper.store.etcd.files import FileKeys
from memkeeper.store.etcd.pending import PendingKeys
from memkeeper.store.etcd.reads import ReadKeys
from memkeeper.store.retry import StoreRetry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.store.etcd.mail import MailKeys
    from memkeeper.store.etcd.meetings import MeetingKeys
    from memkeeper.store.etcd.proposals import ProposalKeys
    from memkeeper.store.etcd.reconciliations import ReconciliationKeys
    from memkeeper.store.etcd.work import WorkKeys

__all__ = ["EtcdStore", "StoreRetry"]


class EtcdStore(FileKeys, EventKeys, ClaimKeys, PendingKeys, ReadKeys):
    """The state of one memory home (or a fleet of them) under ``prefix`` on an etcd cluster,
    with every domain's keys."""

    @property
    def proposals(self) -> ProposalKeys:
        """The merges that could not land (``proposals``), in this store's transactions."""
        from memkeeper.store.etcd.proposals import ProposalKeys

        return ProposalKeys(self)

    @property
    def reconciliations(self) -> ReconciliationKeys:
        """Hand edits of generated regions (``reconciliations``), in this store's transactions."""
        from memkeeper.store.etcd.reconciliations import ReconciliationKeys

        return ReconciliationKeys(self)

    @property
    def mail(self) -> MailKeys:
        """Messages and what each recipient was told (``mail``), in this store's transactions."""
        from memkeeper.store.etcd.mail import MailKeys

        return MailKeys(self)

    @property
    def meetings(self) -> MeetingKeys:
        """Meetings on overlapping claims (``meetings``), in this store's transactions."""
        from memkeeper.store.etcd.meetings import MeetingKeys

        return MeetingKeys(self)

    @property
    def work(self) -> WorkKeys:
        """Work items (``work``), in this store's transactions."""
        from memkeeper.store.etcd.work import WorkKeys

        return WorkKeys(self)
