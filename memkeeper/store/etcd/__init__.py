"""The shared state store on etcd (reference §12): the same domains as SQLite's store
(``store.protocol``), under one key prefix of an etcd cluster that every root naming it shares.

``EtcdStore`` is the core (``core``: the gateway, optimistic transactions on ``stm``, the
format check, raw access to keys, the cache) with one mixin per domain: ``files`` (files,
sections, bodies, versions), ``events`` (the chain, tallies), ``claims`` (claims held by etcd
leases, waiters, counters), ``proposals``, ``reconciliations``, ``pending``, ``mail`` and ``reads``;
``keys`` is the key layout and its format version, ``codec`` the values, ``gateway`` the
client of etcd's JSON gateway.
"""

from __future__ import annotations

from memkeeper.store.etcd.claims import ClaimKeys
from memkeeper.store.etcd.events import EventKeys
from memkeeper.store.etcd.files import FileKeys
from memkeeper.store.etcd.mail import MailKeys
from memkeeper.store.etcd.meetings import MeetingKeys
from memkeeper.store.etcd.pending import PendingKeys
from memkeeper.store.etcd.proposals import ProposalKeys
from memkeeper.store.etcd.reads import ReadKeys
from memkeeper.store.etcd.reconciliations import ReconciliationKeys
from memkeeper.store.etcd.work import WorkKeys
from memkeeper.store.retry import StoreRetry

__all__ = ["EtcdStore", "StoreRetry"]


class EtcdStore(
    FileKeys,
    EventKeys,
    ClaimKeys,
    ProposalKeys,
    ReconciliationKeys,
    PendingKeys,
    MailKeys,
    ReadKeys,
    MeetingKeys,
    WorkKeys,
):
    """The state of one memory home (or a fleet of them) under ``prefix`` on an etcd cluster,
    with every domain's keys."""
