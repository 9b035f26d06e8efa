"""The daemon's etcd watch on a shared store's events (``daemon.storewatch``), on a real
single-member cluster: it wakes the daemon for new events only, and a start revision that was
compacted is started over from now rather than lost."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper import events as ev
from memkeeper.daemon.storewatch import StoreWatch
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.etcd import gateway as etcdgw
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)
_prefixes = itertools.count(1)


@pytest.fixture
def store(cluster: Cluster) -> Iterator[EtcdStore]:
    opened = EtcdStore(cluster.gateway(), f"/watch{next(_prefixes)}/".encode())
    yield opened
    opened.close()


def record(store: EtcdStore, n: int) -> None:
    store.append_event(ev.iso_utc(1_700_000_000.0 + n), "a", "task.done", None, None, {"n": n})


def wait(check: object, timeout: float = 10.0) -> None:
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_watch_wakes_the_daemon_for_new_events_only(store: EtcdStore) -> None:
    watch = StoreWatch(store)
    watch.moved.wait(5)
    time.sleep(0.3)  # the watch is up
    watch.moved.clear()
    store.cache("unrelated", "x")  # not an event: no wake-up
    time.sleep(0.3)
    assert not watch.moved.is_set()
    record(store, 1)
    wait(watch.moved.is_set)


class SlowGateway(etcdgw.Gateway):
    """The watch thread's gateway, whose first connection takes long (a TLS handshake and a
    login to a guarded etcd)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        time.sleep(0.5)
        super().__init__(*args, **kwargs)


def test_an_event_recorded_while_the_watch_thread_connects_still_wakes_the_daemon(
    store: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcdgw, "Gateway", SlowGateway)  # the module storewatch makes it from
    watch = StoreWatch(store)
    watch.moved.clear()  # the daemon's first tick read everything up to here
    record(store, 1)  # before the thread's gateway is even made
    wait(watch.moved.is_set)


def test_a_compacted_start_revision_starts_over_from_now(store: EtcdStore, tmp_path: Path) -> None:
    for n in range(3):
        record(store, n)
    revision = store.gateway.status()["header"]["revision"]
    store.gateway.call("/v3/kv/compaction", {"revision": str(revision), "physical": True})
    watch = StoreWatch(store, start=1)  # long compacted
    wait(lambda: watch.compactions == 1)
    time.sleep(0.3)
    watch.moved.clear()
    record(store, 3)
    wait(watch.moved.is_set)
