"""The etcd store's core: ``prefetch_file``, ``prefetch_files`` and ``prefetch_claims`` as
read-only round trips (one, or one per ``MAX_TXN_OPS`` keys) whose keys are compared only
once read; writes outside a block committing alone and retrying (then giving up); nested and
inner blocks; the limits of one etcd transaction; an endpoint nobody answers on; and the
prefix's format version. A compacted snapshot as ``StoreRetry``, on a cluster of the test's
own: tests/e2e/test_store_processes.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.records import FileState
from memkeeper.store.errors import StoreUnavailable
from memkeeper.store.etcd import EtcdStore, core, keys
from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.core import MAX_REQUEST_BYTES, MAX_TXN_OPS
from memkeeper.store.etcd.gateway import Access, Compare, Gateway, TxnResult
from memkeeper.store.retry import StoreRetry
from tests.etcd_cluster import Cluster, free_port
from tests.store.etcd.conftest import (
    NOW,
    STATE,
    TS,
    Interrupted,
    Recording,
    claim,
    etcd_only,
    pending,
    row,
    sent,
    stored,
    waiter,
)

# -- prefetching ----------------------------------------------------------------------------


@etcd_only
def test_prefetch_file_reads_what_a_patch_reads_first_in_one_read_only_request(
    store: EtcdStore, other: EtcdStore
) -> None:
    other.put_file("C.md", STATE)
    other.put_sections("C.md", [row("build", 0)])
    head = other.append_event(TS[0], "a", "file.indexed", "C.md", None, {})
    other.put_claim(claim("c1", 1, NOW + 30))
    with store.writing():
        store.prefetch_file("C.md")
        [(path, body)] = sent(store)
        assert path == "/v3/kv/txn"
        assert (body["compare"], body["failure"]) == ([], [])
        assert [list(op) for op in body["success"]] == [["request_range"]] * 4
        sent(store).clear()
        assert store.file_state("C.md") == STATE
        assert store.sections("C.md") == [row("build", 0)]
        assert store.events_head() == (head.id, head.hash)
        assert [c.id for c in store.claim_rows()] == ["c1"]
        assert store.any_live_claim(lambda: NOW)
    assert sent(store) == []  # no read went out, and a block that wrote nothing commits nothing


@etcd_only
def test_prefetch_claims_reads_the_table_the_counters_and_the_head_in_one_request(
    store: EtcdStore, other: EtcdStore
) -> None:
    other.put_claim(claim("c1", 1, NOW + 30))
    other.put_waiter(waiter("w1", 1))
    other.bump("token")
    with store.writing():
        store.prefetch_claims()
        assert [path for path, _ in sent(store)] == ["/v3/kv/txn"]
        sent(store).clear()
        claims, waiters = store.claim_table()
        assert ([c.id for c in claims], waiters) == (["c1"], [waiter("w1", 1)])
        assert (store.bump("token"), store.bump("request")) == (2, 1)
        assert store.events_head() is None
        assert sent(store) == []
    assert [path for path, _ in sent(store)] == ["/v3/kv/txn"]  # the commit, alone


@etcd_only
def test_prefetch_files_reads_many_files_rows_in_one_request_per_max_txn_ops_keys(
    store: EtcdStore, other: EtcdStore
) -> None:
    paths = [f"f{n:03d}.md" for n in range(MAX_TXN_OPS // 2 + 3)]  # 2 keys each: 2 requests
    for path in paths[:2]:
        other.put_file(path, STATE)
        other.put_sections(path, [row("build", 0)])
    with store.writing():
        store.prefetch_files(paths)
        bodies = [body for _, body in sent(store)]
        assert [len(body["success"]) for body in bodies] == [MAX_TXN_OPS, 6]
        assert all((body["compare"], body["failure"]) == ([], []) for body in bodies)
        sent(store).clear()
        assert [store.file_state(path) for path in paths[:3]] == [STATE, STATE, None]
        assert store.sections(paths[1]) == [row("build", 0)]
        assert store.sections(paths[-1]) == []
    assert sent(store) == []


@etcd_only
def test_prefetching_outside_a_block_sends_nothing(store: EtcdStore) -> None:
    store.prefetch_file("C.md")
    store.prefetch_files(["C.md", "D.md"])
    store.prefetch_claims()
    assert sent(store) == []


@etcd_only
def test_a_prefetched_key_is_compared_only_once_the_block_reads_it(
    store: EtcdStore, other: EtcdStore
) -> None:
    other.put_file("C.md", STATE)
    with store.writing():
        store.prefetch_file("C.md")
        other.put_file("C.md", FileState(4, "sha256:theirs"))  # fetched, never read: no conflict
        store.cache("note", "mine")
    assert store.cached("note") == "mine"

    def fetch_then_read_what_changed() -> None:
        with store.writing():
            store.prefetch_file("C.md")
            other.put_file("C.md", FileState(5, "sha256:theirs"))
            assert store.file_state("C.md") == FileState(4, "sha256:theirs")  # the snapshot's
            store.cache("note", "again")

    with pytest.raises(StoreRetry):
        fetch_then_read_what_changed()
    assert store.cached("note") == "mine"


# -- writes outside a block -----------------------------------------------------------------


@etcd_only
def test_a_write_outside_a_block_commits_alone_and_retries_a_conflict(
    cluster: Cluster, prefix: bytes, other: EtcdStore
) -> None:
    raced = Interrupted(
        cluster.endpoints, lambda: other.put_pending(pending("a.md", 1.0, 100)), cluster.access
    )
    mine = EtcdStore(raced, prefix)
    raced.times = 1
    mine.put_pending(pending("a.md", 2.0, 200))  # its first commit finds seq 1 taken
    assert raced.times == 0
    assert [(p.seq, p.new_inode) for p in mine.pending("a.md")] == [(1, 100), (2, 200)]
    mine.close()


@etcd_only
def test_a_write_outside_a_block_gives_up_after_its_attempts(
    cluster: Cluster, prefix: bytes, other: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core, "AUTOCOMMIT_ATTEMPTS", 3)
    raced = Interrupted(
        cluster.endpoints, lambda: (other.bump("token"), other.bump("token")), cluster.access
    )
    mine = EtcdStore(raced, prefix)
    raced.times = 3
    with pytest.raises(StoreRetry, match="lost to other writers 3 times"):
        mine.bump("token")
    assert other.bump("token") == 7  # six of theirs, none of mine
    mine.close()


# -- transactions ---------------------------------------------------------------------------


@etcd_only
def test_a_writing_block_inside_another_is_refused_and_nothing_is_applied(
    store: EtcdStore,
) -> None:
    def nest() -> None:
        with store.writing():
            store.put_file("a.md", STATE)
            with store.writing():
                pytest.fail("a nested block ran")

    with pytest.raises(EnvironmentFailure, match="nested"):
        nest()
    assert store.file_state("a.md") is None


@etcd_only
def test_a_writing_block_inside_reading_commits_alone_and_the_snapshot_stays(
    store: EtcdStore,
) -> None:
    with store.reading():
        assert store.file_state("a.md") is None
        with store.writing():
            store.put_file("a.md", STATE)
        assert store.file_state("a.md") is None  # still the reading's snapshot
    assert store.file_state("a.md") == STATE


@etcd_only
def test_a_request_etcd_refuses_is_an_environment_failure_of_its_own(store: EtcdStore) -> None:
    with pytest.raises(EnvironmentFailure) as caught:
        store.file_state("x" * (2 * 1024 * 1024))  # a key beyond etcd's request size
    assert caught.value.message.startswith("state store: etcd:")
    assert "reason" not in caught.value.fields  # neither store_unavailable nor a retry


@etcd_only
def test_a_block_comparing_more_keys_than_etcd_allows_is_refused_before_it_is_sent(
    store: EtcdStore,
) -> None:
    def read_many_then_write() -> None:
        with store.writing():
            for n in range(MAX_TXN_OPS + 1):
                store.file_state(f"f{n}.md")
            store.put_file("a.md", STATE)

    with pytest.raises(EnvironmentFailure) as caught:
        read_many_then_write()
    assert caught.value.fields["reason"] == "store_too_large"
    assert f"{MAX_TXN_OPS + 1} comparisons" in caught.value.message
    assert {path for path, _ in sent(store)} == {"/v3/kv/range"}  # no commit went out
    assert store.file_state("a.md") is None


@etcd_only
def test_a_change_of_more_bytes_than_one_request_takes_is_refused_whole(
    store: EtcdStore,
) -> None:
    def index_a_huge_file() -> None:
        with store.writing():
            store.put_sections("big.md", [row("log", 0, 1, b"x" * MAX_REQUEST_BYTES)])
            store.put_file("big.md", STATE)

    with pytest.raises(EnvironmentFailure) as caught:
        index_a_huge_file()
    assert caught.value.fields["reason"] == "store_too_large"
    assert "nothing was written" in caught.value.message
    assert [path for path, _ in sent(store)] == ["/v3/kv/range"]  # its rows' read: no commit
    assert stored(store) == {b"format": b"6"}  # nothing but what its first request put


# -- an endpoint nobody answers on ----------------------------------------------------------


def test_a_store_nobody_answers_for_is_store_unavailable_naming_the_endpoint() -> None:
    where = f"127.0.0.1:{free_port()}"  # nothing listens there
    store = EtcdStore.open(where, "/mk/down")
    reads: list[Callable[[], object]] = [
        lambda: store.file_state("a.md"),
        store.indexed_paths,
        store.events,
        store.data_version,
        lambda: store.pending("a.md"),
    ]
    for read in reads:
        with pytest.raises(EnvironmentFailure) as caught:
            read()
        assert caught.value.fields["reason"] == "store_unavailable"
        assert where in caught.value.message
    with pytest.raises(EnvironmentFailure) as caught:
        store.cache("k", "v")  # committed alone: not retried as a conflict
    assert caught.value.fields["reason"] == "store_unavailable"
    store.close()


def test_a_blocks_buffered_writes_fail_at_its_commit_when_nobody_answers() -> None:
    store = EtcdStore.open(f"127.0.0.1:{free_port()}", "/mk/down")
    buffered: list[bool] = []

    def write() -> None:
        with store.writing():
            store.put_file("a.md", STATE)
            store.cache("k", "v")
            buffered.append(True)  # nothing was sent yet

    with pytest.raises(EnvironmentFailure) as caught:
        write()
    assert buffered == [True]
    assert caught.value.fields["reason"] == "store_unavailable"
    assert "nothing was changed" in caught.value.message
    store.close()


@etcd_only
def test_open_takes_every_member_and_passes_over_one_that_is_down(
    cluster: Cluster, prefix: bytes
) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        EtcdStore.open("nowhere", prefix.decode())
    store = EtcdStore.open(
        f"127.0.0.1:{free_port()},{cluster.spec}", prefix.decode(), cluster.access
    )
    try:
        assert store.prefix == prefix
        store.put_file("a.md", STATE)
        assert store.file_state("a.md") == STATE
    finally:
        store.gateway.delete(prefix, etcdgw.prefix_end(prefix))
        store.close()


# -- the format version ------------------------------------------------------------------------


@etcd_only
def test_a_fresh_prefix_gets_the_format_version_with_the_first_request(
    cluster: Cluster, prefix: bytes
) -> None:
    fresh = EtcdStore(cluster.gateway(), prefix)
    try:
        fresh.gateway.delete(prefix, etcdgw.prefix_end(prefix))
        assert fresh.file_state("a.md") is None  # a read: the key is written all the same
        assert fresh.gateway.range(prefix + b"format")[1][0].value == b"6"
        assert str(keys.FORMAT_VERSION).encode() == b"6"
    finally:
        fresh.close()


@etcd_only
def test_a_store_opening_a_prefix_that_has_it_only_reads_it(
    cluster: Cluster, store: EtcdStore, prefix: bytes
) -> None:
    second = EtcdStore(Recording(cluster.endpoints, cluster.access), prefix)
    try:
        assert second.file_state("a.md") is None
        assert [path for path, _ in sent(second)] == ["/v3/kv/range", "/v3/kv/range"]
        second.file_state("a.md")
        assert len(sent(second)) == 3  # checked once per store
    finally:
        second.close()


@etcd_only
def test_a_prefix_an_older_memkeeper_wrote_is_adopted_and_nothing_else_changes(
    cluster: Cluster, store: EtcdStore, prefix: bytes
) -> None:
    store.put_file("a.md", STATE)
    store.append_event(TS[0], "a", "file.indexed", "a.md", None, {})
    store.gateway.delete(prefix + b"format")  # as the release before the key left it
    before = stored(store)
    older = EtcdStore(cluster.gateway(), prefix)
    try:
        assert older.file_state("a.md") == STATE
        # and the events not in the index by type, up to the one there was (typeindex)
        assert stored(store) == {**before, b"format": b"6", b"evyfrom": b"1"}
        assert [e.id for e in older.events()] == [1]
    finally:
        older.close()


@etcd_only
@pytest.mark.parametrize("version", [b"1", b"2", b"3"])
def test_a_prefix_of_an_older_format_this_one_reads_is_taken_over_and_nothing_else_changes(
    cluster: Cluster, store: EtcdStore, prefix: bytes, version: bytes
) -> None:
    """Format 3 (issue 22 item 6): etcd ends claims; a claim an older release stored keeps
    its own lease (2 s past its TTL) and is live while it lasts."""
    store.put_file("a.md", STATE)
    store.gateway.put(prefix + b"format", version)
    lease, ttl = store.gateway.grant(32)
    old = json.dumps([1, "agent-a", "write", ["src/"], 0, False, NOW, NOW + 30, "", lease, ttl])
    store.gateway.put(prefix + b"lease/claim\0c1", old.encode(), lease)
    before = stored(store)
    newer = EtcdStore(cluster.gateway(), prefix)
    try:
        assert newer.file_state("a.md") == STATE
        assert stored(store) == {**before, b"format": b"6"}
        (claim_,) = newer.claim_rows()
        assert claim_.is_live(NOW + 3600) is True  # its key is there: etcd has not ended it
    finally:
        newer.close()


@etcd_only
def test_a_prefix_of_the_format_before_signatures_is_marked_as_this_one(
    cluster: Cluster, store: EtcdStore, prefix: bytes
) -> None:
    store.append_event(TS[0], "a", "file.indexed", "a.md", None, {})
    store.gateway.put(prefix + b"format", b"1")  # as format 1 left it: eight-field events
    before = stored(store)
    newer = EtcdStore(cluster.gateway(), prefix)
    try:
        assert [e.id for e in newer.events()] == [1]  # read as they are
        # an older client now refuses it; events up to 1 are not in the index by type
        assert stored(store) == {**before, b"format": b"6", b"evyfrom": b"1"}
    finally:
        newer.close()


@etcd_only
@pytest.mark.parametrize("version", [b"7", b"seven"])
def test_a_prefix_of_another_format_is_refused_saying_what_to_do(
    cluster: Cluster, store: EtcdStore, prefix: bytes, version: bytes
) -> None:
    store.put_file("a.md", STATE)
    store.gateway.put(prefix + b"format", version)
    before = stored(store)
    newer = EtcdStore(cluster.gateway(), prefix)
    try:
        for _ in range(2):  # refused again: a refusal is not remembered as a check
            with pytest.raises(EnvironmentFailure) as caught:
                newer.put_file("b.md", STATE)
            assert not isinstance(caught.value, StoreUnavailable)
            assert caught.value.exit_code == 1
            where = cluster.url(prefix.decode().strip("/"))
            assert caught.value.message == (
                f"the shared store {where} has format version {version.decode()}, this memkeeper "
                "knows 6 — upgrade memkeeper, or name another prefix (MEMKEEPER_STORE, or the "
                "policy's store:)"
            )
        with pytest.raises(EnvironmentFailure, match="format version"):
            newer.file_state("a.md")
        assert stored(store) == before  # nothing written
    finally:
        newer.close()


class FirstUserMeanwhile(Gateway):
    """A gateway before whose first transaction another store takes the prefix first."""

    def __init__(
        self, endpoints: Sequence[tuple[str, int]], first: EtcdStore, access: Access
    ) -> None:
        super().__init__(endpoints, access=access)
        self.first: EtcdStore | None = first

    def txn(
        self,
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        if self.first is not None:
            self.first.check_format()
            self.first = None
        return super().txn(compare, success, failure)


@etcd_only
def test_two_first_users_of_a_prefix_agree_on_its_format(cluster: Cluster, prefix: bytes) -> None:
    gateway = cluster.gateway()
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    one = EtcdStore(gateway, prefix)
    two = EtcdStore(FirstUserMeanwhile(cluster.endpoints, one, cluster.access), prefix)
    try:
        two.check_format()  # read no key; one put it meanwhile: its put-if-absent lost
        _, found = gateway.range(prefix + b"format")
        assert [(kv.value, kv.version) for kv in found] == [(b"6", 1)]  # written once
        two.put_file("a.md", STATE)
        assert one.file_state("a.md") == STATE
    finally:
        one.close()
        two.close()


# -- an answer that comes too late (or never) -------------------------------------------------


class Silent(Gateway):
    """A real gateway whose next write transactions go out and get no answer in time: each
    is applied (``lands``) or not, and the answer is lost; ``deaf`` more requests after it
    get no answer either (the cluster still unreachable)."""

    def __init__(
        self, endpoints: Sequence[tuple[str, int]], access: Access, *, lands: bool, deaf: int
    ) -> None:
        super().__init__(endpoints, access=access)
        self.lands, self.deaf, self.armed = lands, deaf, False

    def txn(
        self,
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        writes = any("request_range" not in op for op in success)
        if self.armed and writes:
            self.armed = False
            if self.lands:
                super().txn(compare, success, failure)
            raise etcdgw.Unavailable("no etcd member answered in time", sent=True)
        if self.deaf and not self.armed and not writes:
            self.deaf -= 1
            raise etcdgw.Unavailable("no etcd member answered", sent=True)
        return super().txn(compare, success, failure)


def silent_store(cluster: Cluster, prefix: bytes, *, lands: bool, deaf: int) -> EtcdStore:
    gateway = Silent(cluster.endpoints, cluster.access, lands=lands, deaf=deaf)
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    opened = EtcdStore(gateway, prefix)
    opened.check_format()
    opened._sleep = lambda seconds: None
    gateway.armed = True
    return opened


def append_one(store: EtcdStore) -> None:
    with store.writing():
        store.append_event(TS[0], "a", "entry.appended", "log.md", None, {"n": 1})


@etcd_only
def test_a_commit_whose_answer_came_too_late_but_landed_is_done_once(
    cluster: Cluster, prefix: bytes
) -> None:
    store = silent_store(cluster, prefix, lands=True, deaf=1)
    append_one(store)
    assert [e.data for e in store.events()] == [{"n": 1}]
    store.close()


@etcd_only
def test_a_commit_no_member_answered_that_did_not_land_runs_again_once(
    cluster: Cluster, prefix: bytes
) -> None:
    store = silent_store(cluster, prefix, lands=False, deaf=0)
    with pytest.raises(StoreRetry):
        append_one(store)
    assert store.events() == []
    append_one(store)
    assert [e.data for e in store.events()] == [{"n": 1}]
    store.close()


@etcd_only
def test_a_commit_whose_outcome_nobody_can_tell_never_says_nothing_changed(
    cluster: Cluster, prefix: bytes
) -> None:
    store = silent_store(cluster, prefix, lands=True, deaf=len(core.SILENCE_PAUSES_S))
    with pytest.raises(StoreUnavailable) as caught:
        append_one(store)
    assert caught.value.fields["outcome"] == "unknown"
    assert "it may have landed" in caught.value.message
    assert "nothing was changed" not in caught.value.message
    assert [e.data for e in store.events()] == [{"n": 1}]
    store.close()


@etcd_only
def test_a_commit_no_member_answered_that_did_not_land_is_no_lost_race(
    cluster: Cluster, prefix: bytes
) -> None:
    """Issue 22 (a fleet losing its etcd leader): the store failing over asks for the block
    again, but no other writer got in first — ``Workspace.again`` spends none of its bound on
    it (before, every such retry counted as a lost race, and a worker gave up as busy)."""
    store = silent_store(cluster, prefix, lands=False, deaf=0)
    with pytest.raises(StoreRetry) as caught:
        append_one(store)
    assert not caught.value.lost
    store.close()


class HandedOn(Gateway):
    """A real gateway whose next write transaction is handed on to another member (the first
    answered without a leader) after another writer changed what the block read."""

    armed = False
    handed_on = 0

    def txn(
        self,
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        if self.armed and any("request_range" not in op for op in success):
            self.armed = False
            for op in success:
                key = etcdgw.KeyValue({"key": op["request_put"]["key"]}).key
                super().put(key, b"another writer's")
            self.failovers += self.handed_on
        return super().txn(compare, success, failure)


@etcd_only
@pytest.mark.parametrize("handed_on", [0, 1])
def test_a_commit_whose_comparisons_fail_is_a_lost_race_unless_handed_on_meanwhile(
    cluster: Cluster, prefix: bytes, handed_on: int
) -> None:
    """Failing against its own first copy (which landed, unanswered, before a leader was
    lost) cannot be told from losing to another writer when the block wrote no event: after a
    failover it spends nothing of the retry loop's bound; without one, it is a lost race."""
    gateway = HandedOn(cluster.endpoints, access=cluster.access)
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    store = EtcdStore(gateway, prefix)
    store.check_format()
    gateway.handed_on, gateway.armed = handed_on, True
    with pytest.raises(StoreRetry) as caught, store.writing():
        store.bump("token")
    assert caught.value.lost is (handed_on == 0)
    store.close()
