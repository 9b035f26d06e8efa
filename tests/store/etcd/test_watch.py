"""The watch that stays on a live member (``store.etcd.watch``) against a real etcd: every
change from a revision, compaction said as such, and — through a proxy that can freeze like
a stopped member, its sockets open and nothing passing — a stream moved off a member that
goes silent, with no event lost or delivered twice, and the silent member written down for
the commands."""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd import liveness
from memkeeper.store.etcd.gateway import EtcdError, Gateway, Unavailable
from memkeeper.store.etcd.members import Members
from memkeeper.store.etcd.watch import LiveWatch
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)
# A stream's member found silent: asked once quiet, the answer waited for, a tick (+ slack).
MOVE_S = liveness.STREAM_S + liveness.ANSWER_S + 0.1 + 0.4


@pytest.fixture
def gw(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[Gateway]:
    gateway = cluster.gateway()
    prefix = f"/t/{request.node.name}/".encode()
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    yield gateway
    gateway.close()


class Freezable:
    """A TCP proxy in front of an etcd member; ``freeze`` stops it passing anything either
    way while every socket stays open (a member stopped with SIGSTOP, as its clients see it)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.frozen = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.endpoint = ("127.0.0.1", int(self.server.getsockname()[1]))
        self.sockets: list[socket.socket] = [self.server]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.server.accept()
                upstream = socket.create_connection(self.target)
                self.sockets += [client, upstream]
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=self._pass, args=(a, b), daemon=True).start()

    def _pass(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                while self.frozen.is_set():
                    time.sleep(0.01)  # held, never dropped: a stopped process's buffers
                sink.sendall(data)

    def close(self) -> None:
        self.frozen.clear()
        for sock in self.sockets:
            sock.close()


def changes(watch: LiveWatch, start: int) -> tuple[queue.Queue[bytes], threading.Thread]:
    """The watch followed on a thread: each event's value, on a queue."""
    found: queue.Queue[bytes] = queue.Queue()

    def run() -> None:
        with contextlib.suppress(Exception), contextlib.closing(watch.follow(start)) as stream:
            for _, events in stream:
                for _, kv in events:
                    found.put(kv.value)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return found, thread


def stop(watch: LiveWatch, thread: threading.Thread) -> None:
    watch.close()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_watch_from_a_revision_sees_every_change_since(gw: Gateway, cluster: Cluster) -> None:
    first = gw.put(b"/t/watch/a", b"1")
    gw.put(b"/t/watch/b", b"2")
    gw.delete(b"/t/watch/a")
    watch = LiveWatch(cluster.gateway(), b"/t/watch/", etcdgw.prefix_end(b"/t/watch/"))
    seen: list[tuple[str, bytes]] = []
    with contextlib.closing(watch.follow(first)) as stream:
        for _, events in stream:
            seen += [(kind, kv.key) for kind, kv in events]
            if len(seen) >= 3:
                break
    assert seen == [("PUT", b"/t/watch/a"), ("PUT", b"/t/watch/b"), ("DELETE", b"/t/watch/a")]
    assert watch.start == first + 3  # on from the revision after the last one delivered


def test_a_watch_past_compaction_says_so(gw: Gateway, cluster: Cluster) -> None:
    old = gw.put(b"/t/compact/a", b"1")
    latest = gw.put(b"/t/compact/a", b"2")
    gw.call("/v3/kv/compaction", {"revision": str(latest), "physical": True})
    end = etcdgw.prefix_end(b"/t/compact/")
    watch = LiveWatch(cluster.gateway(), b"/t/compact/", end)
    with pytest.raises(EtcdError) as caught:
        for _ in watch.follow(old):
            pass
    assert caught.value.code == 11


def test_a_watch_no_member_answers_is_unavailable() -> None:
    deaf = socket.create_server(("127.0.0.1", 0))  # takes connections, never answers
    try:
        watch = LiveWatch(Gateway([deaf.getsockname()[:2]]), b"/t/x/", None)
        started = time.monotonic()
        with pytest.raises(Unavailable, match="no etcd member answered the watch"):
            next(watch.follow(1))
        assert time.monotonic() - started < liveness.ANSWER_S + 0.5
    finally:
        deaf.close()


def test_a_stream_leaves_a_member_that_goes_silent_and_loses_no_event_nor_repeats_one(
    gw: Gateway, cluster: Cluster, tmp_path: Path
) -> None:
    prefix = b"/t/frozen/"
    proxy = Freezable(cluster.endpoints[0])
    members = Members(str(tmp_path))
    gateway = Gateway([proxy.endpoint, cluster.endpoints[0]], members=members)
    watch = LiveWatch(gateway, prefix, etcdgw.prefix_end(prefix))
    try:
        found, thread = changes(watch, gw.put(prefix + b"0", b"0"))
        assert found.get(timeout=5) == b"0"
        assert watch.member == 0  # on the proxy, the first member named
        proxy.frozen.set()
        gw.put(prefix + b"1", b"1")  # held in the frozen proxy: it must not come twice
        started = time.monotonic()
        assert found.get(timeout=5) == b"1"
        assert time.monotonic() - started < MOVE_S
        assert watch.member == 1
        assert watch.moves == 1
        assert members.quiet(proxy.endpoint)  # the commands ask it last now
        for n in range(2, 5):
            gw.put(prefix + str(n).encode(), str(n).encode())
            assert found.get(timeout=5) == str(n).encode()
        proxy.frozen.clear()  # what it held comes out to a closed stream, and no further
        time.sleep(0.3)
        assert found.empty()
        stop(watch, thread)
    finally:
        watch.close()
        proxy.close()


def test_a_member_that_goes_silent_beside_the_stream_is_written_down_for_the_commands(
    gw: Gateway, cluster: Cluster, tmp_path: Path
) -> None:
    proxy = Freezable(cluster.endpoints[0])
    members = Members(str(tmp_path))
    gateway = Gateway([cluster.endpoints[0], proxy.endpoint], members=members)
    watch = LiveWatch(gateway, b"/t/beside/", None)
    try:
        _, thread = changes(watch, gw.put(b"/t/beside/0", b"0"))
        proxy.frozen.set()
        deadline = time.monotonic() + liveness.OTHERS_S + liveness.ANSWER_S + 1.0
        while not members.quiet(proxy.endpoint):
            assert time.monotonic() < deadline, "the silent member was never written down"
            time.sleep(0.02)
        assert watch.member == 0
        assert watch.moves == 0
        proxy.frozen.clear()  # answers again: cleared at its next question
        deadline = time.monotonic() + liveness.SILENT_S + 1.0
        while members.quiet(proxy.endpoint):
            assert time.monotonic() < deadline, "the member answering again stayed silent"
            time.sleep(0.05)
        stop(watch, thread)
    finally:
        watch.close()
        proxy.close()
