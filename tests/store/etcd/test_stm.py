"""Optimistic transactions over a real etcd: snapshot reads, no lost update under
concurrency, phantoms in a range caught, writes visible to their own transaction."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd import stm as etcdstm
from memkeeper.store.etcd.stm import ReadChanged, Txn, run
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from memkeeper.store.etcd.gateway import Gateway

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)


@pytest.fixture
def gw(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[Gateway]:
    gateway = cluster.gateway()
    gateway.delete(b"/s/", etcdgw.prefix_end(b"/s/"))
    yield gateway
    gateway.close()


def test_concurrent_increments_lose_none(gw: Gateway, cluster: Cluster) -> None:
    def increment(txn: Txn) -> int:
        value = int(txn.get(b"/s/counter") or b"0") + 1
        txn.put(b"/s/counter", str(value).encode())
        return value

    def worker() -> None:
        mine = cluster.gateway()
        try:
            for _ in range(25):
                run(mine, increment)
        finally:
            mine.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert gw.range(b"/s/counter")[1][0].value == b"100"


def test_a_key_added_to_a_range_read_aborts_the_commit(gw: Gateway) -> None:
    first = Txn(gw)
    assert first.range(b"/s/slots/") == []
    gw.put(b"/s/slots/b", b"taken")  # another writer, after first's snapshot
    first.put(b"/s/slots/a", b"mine")
    with pytest.raises(ReadChanged):
        first.commit()
    assert [kv.key for kv in gw.range(b"/s/slots/", etcdgw.prefix_end(b"/s/slots/"))[1]] == [
        b"/s/slots/b"
    ]


def test_a_deleted_key_that_was_read_aborts_the_commit(gw: Gateway) -> None:
    gw.put(b"/s/x", b"1")
    txn = Txn(gw)
    assert txn.get(b"/s/x") == b"1"
    gw.delete(b"/s/x")
    txn.put(b"/s/y", b"2")
    with pytest.raises(ReadChanged):
        txn.commit()
    assert gw.range(b"/s/y")[1] == []


def test_a_key_read_as_absent_that_appears_aborts_the_commit(gw: Gateway) -> None:
    txn = Txn(gw)
    assert txn.get(b"/s/new") is None
    gw.put(b"/s/new", b"theirs")
    txn.put(b"/s/new", b"mine")
    with pytest.raises(ReadChanged):
        txn.commit()


def test_reads_see_one_snapshot_and_the_transactions_own_writes(gw: Gateway) -> None:
    gw.put(b"/s/a", b"1")
    txn = Txn(gw)
    assert txn.get(b"/s/a") == b"1"
    gw.put(b"/s/b", b"later")  # after the snapshot: not seen
    assert txn.get(b"/s/b") is None
    txn.put(b"/s/c", b"mine")
    assert txn.range(b"/s/") == [(b"/s/a", b"1"), (b"/s/c", b"mine")]
    txn.delete(b"/s/a")
    assert txn.get(b"/s/a") is None


def test_a_read_only_transaction_commits_nothing(gw: Gateway) -> None:
    (value, revision) = run(gw, lambda txn: txn.get(b"/s/none"))
    assert value is None
    assert revision > 0


def test_endless_contention_gives_up(gw: Gateway, monkeypatch: pytest.MonkeyPatch) -> None:
    def always_raced(txn: Txn) -> None:
        txn.get(b"/s/hot")
        gw.put(b"/s/hot", b"x")  # someone else, every time
        txn.put(b"/s/hot", b"mine")

    monkeypatch.setattr(etcdstm, "BACKOFF_S", 0.0)
    with pytest.raises(etcdstm.Contended):
        run(gw, always_raced, attempts=5)


def test_an_untracked_scan_is_not_compared_at_the_commit(gw: Gateway) -> None:
    first = Txn(gw)
    assert first.scan(b"/s/log/", etcdgw.prefix_end(b"/s/log/"), track=False) == []
    gw.put(b"/s/log/b", b"theirs")  # another writer, after first's snapshot
    first.put(b"/s/mine", b"committed all the same")
    first.commit()
    assert gw.range(b"/s/mine")[1][0].value == b"committed all the same"
