"""The contract of the event chain's checkpoints and compaction: one checkpoint of each kind,
kept over the one before; compacted events gone from every way of reading the log, their
indexes with them, the newest one always kept, and appends chaining on after it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper import checkpoints
from memkeeper import events as ev
from memkeeper.checkpoints import COMPACTED, VERIFIED, Unreadable
from memkeeper.identity import keys
from tests.store.contract.conftest import TS

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore

KEY = keys.Signer("alice", bytes(range(32)))


def made(kind: str, seq: int, hash: str = "sha256:h") -> checkpoints.Checkpoint:
    return checkpoints.make(kind, (seq, hash), TS[0], "human", None, KEY.sign)


def _append_log(store: StateStore) -> None:
    """Eight events: patches of CLAUDE.md#build (1, 5), claim c1 granted and released (2, 4),
    violations (3, 6), claim c1 expired (7), a patch of CLAUDE.md#test (8)."""
    with store.writing():
        store.append_event(TS[0], "a", "section.patched", "CLAUDE.md", "build", {"rev": 2})
        store.append_event(TS[1], "a", "claim.granted", None, None, {"id": "c1"})
        store.append_event(TS[2], "b", "policy.violation", "CLAUDE.md", None, {"reason": "x"})
        store.append_event(TS[3], "b", "claim.released", None, None, {"id": "c1"})
        store.append_event(TS[4], "a", "section.patched", "CLAUDE.md", "build", {"rev": 3})
        store.append_event(TS[5], "b", "policy.violation", "AGENTS.md", None, {"reason": "y"})
        store.append_event(TS[6], "c", "claim.expired", None, None, {"id": "c1"})
        store.append_event(TS[7], "c", "section.patched", "CLAUDE.md", "test", {"n": 1})


def test_a_checkpoint_of_each_kind_is_kept_over_the_one_before(store: StateStore) -> None:
    assert store.chain_checkpoint(VERIFIED) is None
    assert store.chain_checkpoint(COMPACTED) is None
    with store.writing():
        store.put_chain_checkpoint(made(VERIFIED, 3))
    store.put_chain_checkpoint(made(COMPACTED, 2))  # alone: its own transaction
    assert store.chain_checkpoint(VERIFIED) == made(VERIFIED, 3)
    store.put_chain_checkpoint(made(VERIFIED, 5, "sha256:e"))
    assert store.chain_checkpoint(VERIFIED) == made(VERIFIED, 5, "sha256:e")
    assert store.chain_checkpoint(COMPACTED) == made(COMPACTED, 2)


def test_a_write_dropped_with_its_block_leaves_no_checkpoint(store: StateStore) -> None:
    def dropped() -> None:
        with store.writing():
            store.put_chain_checkpoint(made(VERIFIED, 3))
            raise RuntimeError("dropped")

    with pytest.raises(RuntimeError):
        dropped()
    assert store.chain_checkpoint(VERIFIED) is None


def test_compacted_events_are_gone_from_every_read(store: StateStore) -> None:
    _append_log(store)
    whole = store.events()
    with store.writing():
        assert store.compact_events(4) == 4
    assert store.events() == whole[4:]
    assert store.events(since=2) == whole[4:]
    assert store.events(since=5, limit=1) == whole[5:6]
    assert store.events_of("CLAUDE.md", "build", 10) == [whole[4]]
    assert store.events_of("CLAUDE.md", None, 10) == []
    assert [e.id for e in store.events_typed(("policy.violation",), TS[0])] == [6]
    assert store.count_events("policy.violation", TS[0]) == 1
    assert store.count_events("claim.released", TS[0]) == 0
    assert store.last_claim_event("c1") == whole[6]
    assert store.last_events("CLAUDE.md") == {"build": whole[4], "test": whole[7]}
    assert store.last_event() == whole[-1]
    assert store.events_head() == (8, whole[-1].hash)
    assert ev.chain_breaks(store.events(), (4, whole[3].hash)) == []


def test_the_newest_event_is_never_compacted(store: StateStore) -> None:
    _append_log(store)
    newest = store.events()[-1]
    with store.writing():
        assert store.compact_events(100) == 7
    assert store.events() == [newest]
    with store.writing():
        assert store.compact_events(100) == 0
    with store.writing():
        after = store.append_event(TS[8], "a", "note", None, None, {})
    assert (after.id, after.prev) == (9, newest.hash)


def test_compacting_an_empty_log_or_nothing_removes_nothing(store: StateStore) -> None:
    with store.writing():
        assert store.compact_events(5) == 0
    _append_log(store)
    with store.writing():
        assert store.compact_events(0) == 0
    assert len(store.events()) == 8


def test_a_checkpoint_that_is_not_one_is_unreadable(store: StateStore) -> None:
    """Written past the store (by anyone with access to it): reported, not trusted."""
    store.put_chain_checkpoint(made(VERIFIED, 3))
    from memkeeper.store.etcd import EtcdStore
    from memkeeper.store.sqlite import Store

    if isinstance(store, Store):
        store._db.execute("UPDATE checkpoints SET record = 'garbage'")
    else:
        assert isinstance(store, EtcdStore)
        with store.writing():
            store._put(store._key("chk", VERIFIED), b"garbage")
    with pytest.raises(Unreadable):
        store.chain_checkpoint(VERIFIED)
