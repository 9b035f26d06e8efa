"""The event chain's checkpoints in the SQLite store: a table of its own, which a store of an
older schema gets on upgrade, its events kept and compactable; a compaction is one statement
in the caller's transaction."""

from __future__ import annotations

from pathlib import Path

from memkeeper import checkpoints
from memkeeper.identity import keys
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.schema import SCHEMA_VERSION
from tests.store.sqlite.conftest import pragma, raw_sql

KEY = keys.Signer("alice", bytes(range(32)))
TS = "2026-12-07T05:00:00.000Z"


def test_a_store_of_schema_12_gets_the_checkpoints_table_and_keeps_its_log(home: Path) -> None:
    store = Store.open(str(home))
    with store.writing():
        for n in range(3):
            store.append_event(TS, "a", "note", None, None, {"n": n})
    whole = store.events()
    store.close()
    raw_sql(home, "DROP TABLE checkpoints")
    raw_sql(home, "PRAGMA user_version=12")
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION == 16
        assert upgraded.events() == whole
        assert upgraded.chain_checkpoint(checkpoints.VERIFIED) is None
        made = checkpoints.make(
            checkpoints.COMPACTED, (whole[1].id, whole[1].hash), TS, "a", None, KEY.sign
        )
        with upgraded.writing():
            assert upgraded.compact_events(2) == 2
            upgraded.put_chain_checkpoint(made)
        assert upgraded.events() == whole[2:]
        assert upgraded.chain_checkpoint(checkpoints.COMPACTED) == made
    finally:
        upgraded.close()


def test_a_compaction_dropped_with_its_block_removes_nothing(store: Store) -> None:
    with store.writing():
        for n in range(3):
            store.append_event(TS, "a", "note", None, None, {"n": n})
    try:
        with store.writing():
            store.compact_events(2)
            raise KeyError("dropped")
    except KeyError:
        pass
    assert [e.id for e in store.events()] == [1, 2, 3]
