"""The contract of the stores' transactions and their cache: a block that raises leaves nothing of
any domain, a read block sees one snapshot, the cache inside and outside a block; on etcd, a
commit resent after its answer was lost counts once, the change signal moves with a write. A
stopped cluster is ``store_unavailable``: tests/e2e/test_store_processes.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from tests.store.contract.conftest import (
    ROWS,
    STATE,
    TS,
    etcd_on,
    etcd_only,
    index,
    pending_write,
)

if TYPE_CHECKING:
    from memkeeper.store.etcd.gateway import Compare, TxnResult
    from memkeeper.store.protocol import StateStore
    from tests.etcd_cluster import Cluster


def test_a_block_that_raises_leaves_nothing(store: StateStore) -> None:
    def everything_then_fail() -> None:
        with store.writing():
            store.put_sections("CLAUDE.md", ROWS)
            store.put_file("CLAUDE.md", STATE)
            store.append_event(TS[0], "a", "x", "CLAUDE.md", None, {})
            store.cache("k", "v")
            store.reconciliations.open_reconciliation("CLAUDE.md", "r", "h", "g", "a", TS[0])
            store.put_pending(pending_write("CLAUDE.md", 1.0, 1))
            assert store.file_state("CLAUDE.md") == STATE
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        everything_then_fail()
    assert store.file_state("CLAUDE.md") is None
    assert store.sections("CLAUDE.md", with_absent=True) == []
    assert store.events() == []
    assert store.events_head() is None
    assert store.cached("k") is None
    assert store.reconciliations.reconciliations(resolved=True) == []
    assert store.pending("CLAUDE.md") == []


def test_reading_sees_one_snapshot(store: StateStore) -> None:
    index(store)
    with store.reading():
        assert store.file_state("CLAUDE.md") == STATE
        assert store.section_keys("CLAUDE.md")[0] == ("_preamble", "_preamble")


def test_cache_inside_and_outside_a_block(store: StateStore) -> None:
    assert store.cached("policy:abc") is None
    store.cache("policy:abc", '{"x": 1}')
    assert store.cached("policy:abc") == '{"x": 1}'
    with store.writing():
        store.cache("policy:abc", "2")
        assert store.cached("policy:abc") == "2"
    assert store.cached("policy:abc") == "2"


# -- etcd only ------------------------------------------------------------------------------


@etcd_only
def test_a_commit_resent_after_its_answer_was_lost_counts_once(
    cluster: Cluster, prefix: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = etcd_on(cluster, prefix)
    real = store.gateway.txn

    def landed_then_resent(
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        real(compare, success, failure)  # applied, but its answer never came back
        return real(compare, success, failure)  # the gateway's resend: compares fail

    monkeypatch.setattr(store.gateway, "txn", landed_then_resent)
    with store.writing():
        store.append_event(TS[0], "a", "x", None, None, {})
    monkeypatch.undo()
    assert [e.id for e in store.events()] == [1]
    store.close()


@etcd_only
def test_data_version_moves_with_a_write(cluster: Cluster, prefix: bytes) -> None:
    """(SQLite's counts only other connections' commits: tests/store/sqlite/test_core.py.)"""
    store = etcd_on(cluster, prefix)
    before = store.data_version()
    store.cache("k", "v")
    assert store.data_version() > before
    store.close()
