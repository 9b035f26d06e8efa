"""The etcd gateway client against a real etcd: keys, compare-and-swap transactions, leases,
a member that never answers, and a three-member cluster losing members (watches:
test_watch.py)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.gateway import Compare, Gateway, Unavailable
from memkeeper.store.etcd.members import Members
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)


@pytest.fixture
def gw(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[Gateway]:
    gateway = cluster.gateway()
    prefix = f"/t/{request.node.name}/".encode()
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    yield gateway
    gateway.close()


def test_put_range_and_delete(gw: Gateway) -> None:
    rev = gw.put(b"/t/a/1", b"one")
    gw.put(b"/t/a/2", b"two\x00\xff")  # any bytes
    at, found = gw.range(b"/t/a/", etcdgw.prefix_end(b"/t/a/"))
    assert at >= rev
    assert [(kv.key, kv.value) for kv in found] == [
        (b"/t/a/1", b"one"),
        (b"/t/a/2", b"two\x00\xff"),
    ]
    assert found[0].mod_revision == rev
    assert gw.delete(b"/t/a/", etcdgw.prefix_end(b"/t/a/")) == 2
    assert gw.range(b"/t/a/1")[1] == []


def test_a_txn_compares_and_swaps_and_answers_from_its_failure_branch(gw: Gateway) -> None:
    key = b"/t/cas/x"
    created = gw.txn([Compare(key, "VERSION", "EQUAL", 0)], [etcdgw.put(key, b"v1")])
    assert created.succeeded
    _, (kv,) = gw.range(key)
    stale = gw.txn(
        [Compare(key, "MOD", "EQUAL", kv.mod_revision - 1)],
        [etcdgw.put(key, b"lost")],
        [etcdgw.get(key)],
    )
    assert not stale.succeeded
    assert [k.value for k in stale.responses[0]] == [b"v1"]
    fresh = gw.txn([Compare(key, "MOD", "EQUAL", kv.mod_revision)], [etcdgw.put(key, b"v2")])
    assert fresh.succeeded
    assert fresh.revision > kv.mod_revision
    assert gw.range(key)[1][0].value == b"v2"


def test_a_txn_of_many_operations_bumps_the_revision_once(gw: Gateway) -> None:
    before = gw.put(b"/t/many/0", b"0")
    done = gw.txn([], [etcdgw.put(f"/t/many/{n}".encode(), b"x") for n in range(1, 6)])
    assert done.revision == before + 1


def test_leases_expire_their_keys_and_keepalive_renews(gw: Gateway) -> None:
    lease, ttl = gw.grant(1)
    assert ttl >= 1
    gw.put(b"/t/lease/k", b"held", lease=lease)
    assert gw.keepalive(lease) >= 1
    assert gw.range(b"/t/lease/k")[1]
    deadline = time.monotonic() + 5
    while gw.range(b"/t/lease/k")[1] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gw.range(b"/t/lease/k")[1] == []
    assert gw.time_to_live(lease) == -1
    other, _ = gw.grant(30)
    gw.put(b"/t/lease/j", b"held", lease=other)
    gw.revoke(other)
    assert gw.range(b"/t/lease/j")[1] == []
    gw.revoke(other)  # twice is no error


def test_nothing_listening_is_unavailable(tmp_path: Path) -> None:
    from tests.etcd_cluster import free_port

    gateway = Gateway([("127.0.0.1", free_port())], timeout=1)
    with pytest.raises(Unavailable, match="no etcd member answered"):
        gateway.range(b"/x")


class Deaf:
    """A member frozen with its socket open: it takes the connection and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.endpoint = ("127.0.0.1", int(self.sock.getsockname()[1]))

    def close(self) -> None:
        self.sock.close()


def test_a_member_that_never_answers_is_given_up_on_soon_and_asked_last_next_time(
    gw: Gateway, cluster: Cluster, tmp_path: Path
) -> None:
    deaf = Deaf()
    try:
        first = Gateway(
            [deaf.endpoint, *cluster.endpoints],
            members=Members(str(tmp_path)),
            access=cluster.access,
        )
        started = time.monotonic()
        first.range(b"/t/any")
        assert time.monotonic() - started < etcdgw.FAILOVER_S + 0.5
        first.close()
        # the next process (a new gateway on the same home) does not ask it first
        second = Gateway(
            [deaf.endpoint, *cluster.endpoints],
            members=Members(str(tmp_path)),
            access=cluster.access,
        )
        second.login.token = first.login.token  # a guarded cluster: the login is not timed
        started = time.monotonic()
        second.range(b"/t/any")
        assert time.monotonic() - started < 0.5
        second.close()
    finally:
        deaf.close()


def test_a_member_found_silent_elsewhere_is_left_by_a_gateway_that_prefers_it(
    gw: Gateway, cluster: Cluster, tmp_path: Path
) -> None:
    """A daemon's watch finds its gateway's member silent (another thread, one memory): the
    gateway's next request goes to another member at once, not after a timeout."""
    deaf = Deaf()
    try:
        members = Members(str(tmp_path))
        gateway = Gateway([deaf.endpoint, *cluster.endpoints], members=members)
        gateway._preferred = 0  # it answered here before it froze
        members.silent(deaf.endpoint)
        started = time.monotonic()
        gateway.range(b"/t/any")
        assert time.monotonic() - started < 0.5
        gateway.close()
    finally:
        deaf.close()


def test_a_request_waiting_on_a_member_found_silent_meanwhile_goes_to_the_next_at_once(
    gw: Gateway, cluster: Cluster, tmp_path: Path
) -> None:
    """The daemon's request already waiting on a member when its watch finds the member
    silent (another thread) does not wait out its second."""
    deaf = Deaf()
    try:
        members = Members(str(tmp_path))
        gateway = Gateway([deaf.endpoint, *cluster.endpoints], members=members)
        timer = threading.Timer(0.2, members.silent, args=(deaf.endpoint,))
        timer.start()
        started = time.monotonic()
        gateway.range(b"/t/any")
        assert time.monotonic() - started < 0.2 + 0.4 < etcdgw.FAILOVER_S
        timer.join()
        gateway.close()
    finally:
        deaf.close()


def member_id(endpoint: tuple[str, int]) -> str:
    one = Gateway([endpoint])
    try:
        return str(one.status()["header"]["member_id"])
    finally:
        one.close()


@pytest.mark.slow
def test_three_members_keep_serving_with_one_killed_and_refuse_without_quorum(
    tmp_path: Path,
) -> None:
    cluster = Cluster(tmp_path, size=3).start()
    try:
        gateway = Gateway(cluster.endpoints, timeout=2)
        gateway.put(b"/t/q", b"0")
        leader_id = gateway.status()["leader"]
        leader = next(m for m in cluster.members if member_id(m.endpoint) == leader_id)
        cluster.kill(leader)
        written = 0
        deadline = time.monotonic() + 15
        while written < 20 and time.monotonic() < deadline:
            try:
                gateway.put(b"/t/q", str(written).encode())
                written += 1
            except Unavailable:
                time.sleep(0.1)  # an election
        assert written == 20
        cluster.kill(next(m for m in cluster.members if m is not leader and m.process))
        with pytest.raises(Unavailable):
            gateway.put(b"/t/q", b"no quorum")
        gateway.close()
    finally:
        cluster.stop()
