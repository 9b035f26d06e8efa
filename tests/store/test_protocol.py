"""The store's protocols: ``StateStore`` declares exactly the methods both backends offer
(their ``open`` aside, which differs by nature), each in one domain (or in ``StateStore``'s
own: the transactions, prefetches and cache) — a domain a read or a patch does not use is an
attribute of the store, whose methods both backends' classes of it offer. That a read imports
none of it, as the protocol module loads ``typing`` (a hot module names it under
``TYPE_CHECKING`` only), nor those domains: tests/e2e/test_startup_imports.py. Whether each
backend implements each protocol: tests/test_architecture.py."""

from __future__ import annotations

import inspect

from memkeeper.store import protocol
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.etcd.mail import MailKeys
from memkeeper.store.etcd.meetings import MeetingKeys
from memkeeper.store.etcd.proposals import ProposalKeys
from memkeeper.store.etcd.reconciliations import ReconciliationKeys
from memkeeper.store.etcd.work import WorkKeys
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.mail import MailRows
from memkeeper.store.sqlite.meetings import MeetingRows
from memkeeper.store.sqlite.proposals import ProposalRows
from memkeeper.store.sqlite.reconciliations import ReconciliationRows
from memkeeper.store.sqlite.work import WorkRows

# The domains loaded on first use: each backend's class of each (``store.<domain>``).
ON_USE: dict[str, tuple[type[object], type[object]]] = {
    "proposals": (ProposalRows, ProposalKeys),
    "reconciliations": (ReconciliationRows, ReconciliationKeys),
    "mail": (MailRows, MailKeys),
    "meetings": (MeetingRows, MeetingKeys),
    "work": (WorkRows, WorkKeys),
}


def declared(proto: type[object]) -> set[str]:
    """The methods a protocol class declares itself."""
    return {n for n, v in vars(proto).items() if inspect.isfunction(v) and not n.startswith("_")}


def attributes(proto: type[object]) -> set[str]:
    """The domains a protocol class declares as attributes (``StateStore.mail`` …)."""
    return {n for n, v in vars(proto).items() if isinstance(v, property)}


def public(backend: type[object]) -> set[str]:
    return {name for name in dir(backend) if not name.startswith("_")}


def test_the_state_store_is_what_both_backends_offer_but_their_opening() -> None:
    mixed = [p for p in protocol.DOMAINS.values() if p in protocol.StateStore.__mro__]
    own = declared(protocol.StateStore).union(
        attributes(protocol.StateStore), *map(declared, mixed)
    )
    assert own == (public(Store) & public(EtcdStore)) - {"open"}
    for name, (rows, keys) in ON_USE.items():
        assert declared(protocol.DOMAINS[name]) == public(rows) & public(keys)
    every = own - set(ON_USE) | {m for name in ON_USE for m in declared(protocol.DOMAINS[name])}
    assert len(every) == 96  # + claim records (3), reads (6), meetings (7), add_claim_record,
    # work items (4), their trim (2), prefetch_files, the chain's checkpoints and compaction (3),
    # wake_waiters, section_row, recent_events, every file's hash and section count (2)


def test_each_method_belongs_to_one_domain_or_to_the_state_stores_own() -> None:
    parts = [declared(protocol.StateStore), *map(declared, protocol.DOMAINS.values())]
    assert sum(map(len, parts)) == len(set().union(*parts))  # none declared twice
    assert {"writing", "reading", "cache", "prefetch_file", "prefetch_files"} <= declared(
        protocol.StateStore
    )
    assert {"keep_bodies", "body_at", "version_rev"} <= declared(protocol.FileStore)
    assert {"tally", "tally_count"} <= declared(protocol.EventStore)


def test_the_state_store_extends_each_domain_or_has_it_as_an_attribute() -> None:
    mixed = {p for p in protocol.DOMAINS.values() if p in protocol.StateStore.__mro__}
    assert mixed == {
        protocol.FileStore, protocol.EventStore, protocol.ClaimStore, protocol.PendingStore,
        protocol.ReadStore,
    }  # fmt: skip
    assert attributes(protocol.StateStore) == set(ON_USE)
    assert {protocol.DOMAINS[name] for name in ON_USE} | mixed == set(protocol.DOMAINS.values())
    assert list(protocol.DOMAINS) == [
        "files", "events", "claims", "proposals", "reconciliations", "pending", "mail", "reads",
        "meetings", "work",
    ]  # fmt: skip
