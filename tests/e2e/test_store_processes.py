"""The stores with real processes around them: SQLite written by several processes at once
(twelve creating a new store together, four appending events) losing no event and keeping one
chain; and etcd clusters of a test's own — stopped under a store (``store_unavailable``),
compacted under a read's snapshot (``StoreRetry``)."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from memkeeper import events as ev
from memkeeper.errors import EnvironmentFailure
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.etcd.gateway import Gateway
from memkeeper.store.retry import StoreRetry
from memkeeper.store.sqlite import Store
from tests.etcd_cluster import Cluster
from tests.store.contract.conftest import STATE, etcd_on, etcd_only

# -- SQLite, several processes at once ------------------------------------------------------

# Workers start from a fork server, never from this process: a fork copies whatever lock
# another thread of a test run held at that instant (SQLite's, this package's), and the child
# that needs it hangs. The server is one clean process with this module loaded; forking it
# costs what a fork costs.
PROCESSES = multiprocessing.get_context("forkserver")
PROCESSES.set_forkserver_preload([__name__])


def open_and_append(home: str, actor: str, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()
    store = Store.open(home)  # all at once, on a home that does not exist yet
    try:
        with store.writing():
            store.append_event(ev.iso_utc(0), actor, "emit", None, None, {})
    finally:
        store.close()


@pytest.mark.parametrize("round_", range(5))
def test_processes_creating_the_store_at_once_all_succeed(tmp_path: Path, round_: int) -> None:
    home = str(tmp_path / "fresh" / ".memkeeper")
    os.makedirs(os.path.dirname(home))
    start = PROCESSES.Barrier(12)
    workers = [
        PROCESSES.Process(target=open_and_append, args=(home, f"w{i:02}", start)) for i in range(12)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * 12
    store = Store.open(home)
    try:
        assert sorted(e.actor for e in store.events()) == [f"w{i:02}" for i in range(12)]
    finally:
        store.close()


WRITERS, EACH = 4, 50


def append_many(home: str, actor: str, start: multiprocessing.synchronize.Barrier) -> None:
    store = Store.open(home)
    start.wait()
    try:
        for n in range(EACH):
            with store.writing():
                store.append_event(ev.iso_utc(n), actor, "emit", None, None, {"n": n})
    finally:
        store.close()


def test_concurrent_writers_lose_no_event_and_keep_the_chain(tmp_path: Path) -> None:
    home = tmp_path / ".memkeeper"
    store = Store.open(str(home))
    try:
        start = PROCESSES.Barrier(WRITERS)
        workers = [
            PROCESSES.Process(target=append_many, args=(str(home), f"w{i}", start))
            for i in range(WRITERS)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        assert [worker.exitcode for worker in workers] == [0] * WRITERS
        stored = store.events()
        assert [e.id for e in stored] == list(range(1, WRITERS * EACH + 1))
        assert ev.chain_breaks(stored) == []
        for i in range(WRITERS):
            mine = [e.data["n"] for e in stored if e.actor == f"w{i}"]
            assert mine == list(range(EACH))
    finally:
        store.close()


# -- etcd, a cluster of the test's own ---------------------------------------------------------

# The cluster is the test's alone: any prefix will do.
PREFIX = b"/mk/own/"


@etcd_only
def test_a_stopped_cluster_is_store_unavailable(tmp_path: Path) -> None:
    own = Cluster(tmp_path).start()
    gone = etcd_on(own, PREFIX)
    gone.cache("k", "v")
    own.stop()
    with pytest.raises(EnvironmentFailure) as read:
        gone.cached("k")
    assert read.value.fields["reason"] == "store_unavailable"
    with pytest.raises(EnvironmentFailure) as write, gone.writing():
        gone.put_file("x.md", STATE)
    assert write.value.fields["reason"] == "store_unavailable"
    assert "nothing was changed" in write.value.message
    gone.close()


@etcd_only
def test_a_snapshot_compacted_away_meanwhile_is_a_store_retry(tmp_path: Path) -> None:
    own = Cluster(tmp_path).start()  # compacting: not the shared cluster
    store = EtcdStore(Gateway(own.endpoints), PREFIX)

    def read_across_a_compaction() -> None:
        with store.reading():
            assert store.file_state("a.md") == STATE  # the snapshot: this revision
            revision = store.gateway.put(b"/elsewhere", b"x")
            store.gateway.call("/v3/kv/compaction", {"revision": str(revision)})
            store.file_state("b.md")  # a read at the snapshot, compacted away

    try:
        store.put_file("a.md", STATE)
        with pytest.raises(StoreRetry, match="compacted"):
            read_across_a_compaction()
    finally:
        store.close()
        own.stop()
