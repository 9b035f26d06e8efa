"""The store's protocols: ``StateStore`` declares exactly the methods both backends offer
(their ``open`` aside, which differs by nature), each in one domain (or in ``StateStore``'s
own: the transactions, prefetches and cache). That a read imports none of it, as the protocol
module loads ``typing`` (a hot module names it under ``TYPE_CHECKING`` only):
tests/e2e/test_startup_imports.py. Whether each backend implements each protocol:
tests/test_architecture.py."""

from __future__ import annotations

import inspect

from memkeeper.store import protocol
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.sqlite import Store


def declared(proto: type[object]) -> set[str]:
    """The methods a protocol class declares itself."""
    return {n for n, v in vars(proto).items() if inspect.isfunction(v) and not n.startswith("_")}


def public(backend: type[object]) -> set[str]:
    return {name for name in dir(backend) if not name.startswith("_")}


def test_the_state_store_is_what_both_backends_offer_but_their_opening() -> None:
    every = declared(protocol.StateStore).union(*map(declared, protocol.DOMAINS.values()))
    assert every == (public(Store) & public(EtcdStore)) - {"open"}
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


def test_the_state_store_extends_every_domain() -> None:
    assert set(protocol.DOMAINS.values()) <= set(protocol.StateStore.__mro__)
    assert list(protocol.DOMAINS) == [
        "files", "events", "claims", "proposals", "reconciliations", "pending", "mail", "reads",
        "meetings", "work",
    ]  # fmt: skip
