"""What only the etcd store does, against a real single-member etcd (a fresh prefix per test):
the key layout its docstring promises under the prefix; ``prefetch_file`` and
``prefetch_claims`` as one read-only round trip whose keys are compared only once read; a
block whose reads changed (a deletion too, through its table's marker) failing as
``StoreRetry`` with nothing applied; writes outside a block committing alone and retrying;
claim keys held by etcd leases that are revoked only once a drop commits; the limits of one
etcd transaction; and an endpoint nobody answers on. What both backends share is asserted by
tests/store/test_store_contract.py."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import events as ev
from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.errors import EnvironmentFailure
from memkeeper.records import FileState, PendingWrite, SectionRow
from memkeeper.store import etcdgw, etcdstore
from memkeeper.store.etcdgw import Compare, Gateway, TxnResult
from memkeeper.store.etcdstore import MAX_REQUEST_BYTES, MAX_TXN_OPS, EtcdStore, StoreRetry
from tests.etcd_cluster import Cluster, binary, free_port

if TYPE_CHECKING:
    from memkeeper.coordination import Proposal

EXE, WHY = binary()
etcd_only = pytest.mark.skipif(EXE is None, reason=WHY)

NOW = 1_700_000_000.0
TS = [ev.iso_utc(1_800_000_000 + n) for n in range(5)]
STATE = FileState(3, "sha256:" + "ab" * 32)


class Recording(Gateway):
    """A real gateway that also remembers every request it sends: its path and its body."""

    def __init__(self, endpoints: Sequence[tuple[str, int]]) -> None:
        super().__init__(endpoints)
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((path, body))
        return super().call(path, body)


class Interrupted(Gateway):
    """A real gateway before whose next ``times`` commits (transactions that write) another
    writer does ``meanwhile``: each of those commits then finds what it read changed."""

    def __init__(
        self, endpoints: Sequence[tuple[str, int]], meanwhile: Callable[[], object]
    ) -> None:
        super().__init__(endpoints)
        self.meanwhile = meanwhile
        self.times = 0

    def txn(
        self,
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        writes = any("request_range" not in op for op in success)
        if writes and self.times > 0:
            self.times -= 1
            self.meanwhile()
        return super().txn(compare, success, failure)


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> bytes:
    return f"/mk/etcdstore/{request.node.name}/".encode()


@pytest.fixture
def store(cluster: Cluster, prefix: bytes) -> Iterator[EtcdStore]:
    """A store on an empty prefix whose gateway records what it sends (``sent``)."""
    gateway = Recording(cluster.endpoints)
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    gateway.sent.clear()
    opened = EtcdStore(gateway, prefix)
    yield opened
    opened.close()


@pytest.fixture
def other(cluster: Cluster, prefix: bytes, store: EtcdStore) -> Iterator[EtcdStore]:
    """Another machine's store on the same prefix."""
    opened = EtcdStore(Gateway(cluster.endpoints), prefix)
    yield opened
    opened.close()


def sent(store: EtcdStore) -> list[tuple[str, dict[str, Any]]]:
    assert isinstance(store.gateway, Recording)
    return store.gateway.sent


def stored(store: EtcdStore) -> dict[bytes, bytes]:
    """Every key under the store's prefix (the prefix cut off) and its value, as etcd has it."""
    _, found = store.gateway.range(store.prefix, etcdgw.prefix_end(store.prefix))
    return {kv.key[len(store.prefix) :]: kv.value for kv in found}


def under(store: EtcdStore, table: bytes) -> dict[bytes, bytes]:
    return {k: v for k, v in stored(store).items() if k.startswith(table)}


def key(*parts: str) -> bytes:
    """A key below the prefix: ``table/`` and its parts joined by NUL, as the layout says."""
    return "\0".join(parts).encode()


def n20(number: int) -> str:
    return f"{number:020d}"


def row(
    name: str, ord_: int, rev: int = 1, body: bytes = b"text\n", *, present: bool = True
) -> SectionRow:
    heading = f"# {name}\n".encode()
    hash_ = ev.digest(heading + body) if present else None
    return SectionRow(name, ord_, rev, hash_, present, name.title(), 1, name, heading, body, 2)


def claim(id: str, token: int, expires_at: float) -> Claim:
    return Claim(id, token, "agent-a", "write", ("CLAUDE.md#build",), 0, False, NOW, expires_at, "")


def waiter(id: str, arrival: int, priority: int = 5) -> WaiterRow:
    request = Request(id, "agent-b", "read", ("docs/",), priority, True, 90.0, "review", arrival)
    return WaiterRow(request, 4242, NOW + 30, "waiting", None)


def pending(path: str, at: float, new_inode: int) -> PendingWrite:
    return PendingWrite(
        0, path, 11, 1_700_000_000_123_456_789, 42, "sha256:o", new_inode, "sha256:n", ".t", at
    )


def lease_of(store: EtcdStore, claim_id: str) -> int:
    _, found = store.gateway.range(store.prefix + key("lease/claim", claim_id))
    return found[0].lease if found else 0


# -- the key layout -----------------------------------------------------------------------------


@etcd_only
def test_the_prefix_gains_its_slash_and_holds_every_key(cluster: Cluster, store: EtcdStore) -> None:
    bare = EtcdStore(Gateway(cluster.endpoints), store.prefix.rstrip(b"/"))
    try:
        assert bare.prefix == store.prefix
        bare.put_file("a.md", STATE)
    finally:
        bare.close()
    assert store.file_state("a.md") == STATE
    assert list(stored(store)) == [b"file/a.md"]  # P/file/<path>, the slash added


@etcd_only
def test_a_file_is_two_keys_of_compact_json_its_state_and_all_its_sections(
    store: EtcdStore,
) -> None:
    rows = [row("café", 0), row("raw", 1, 2, b"\xff\xfe\n"), row("gone", 2, 4, b"", present=False)]
    with store.writing():
        store.put_file("docs/a.md", STATE)
        store.put_sections("docs/a.md", rows)
    keys = stored(store)
    assert set(keys) == {b"file/docs/a.md", b"sec/docs/a.md"}  # a new file archives no body
    assert keys[b"file/docs/a.md"] == f'[3,"{STATE.file_hash}"]'.encode()
    raw = keys[b"sec/docs/a.md"]
    assert b", " not in raw
    assert b": " not in raw
    assert "Café".encode() in raw  # UTF-8 as it is, not \u escapes
    sections = json.loads(raw)
    assert list(sections) == ["café", "gone", "raw"]
    fields = [0, 1, rows[0].hash, True, "Café", 1, "café", "# café\n", "text\n", 2]
    assert sections["café"] == fields  # ord, rev, hash, present, title … body, lines
    assert sections["raw"][8] == {"b64": base64.b64encode(b"\xff\xfe\n").decode()}  # not UTF-8
    assert sections["gone"][2:4] == [None, False]
    assert store.sections("docs/a.md", with_absent=True) == [rows[0], rows[1], rows[2]]


@etcd_only
def test_a_body_is_archived_at_its_rev_only_once_its_section_moves_on(store: EtcdStore) -> None:
    def bodies() -> dict[bytes, Any]:
        return {k: json.loads(v) for k, v in under(store, b"body/").items()}

    store.put_sections("m.md", [row("log", 0, 1, b"one\n")])
    store.put_sections("m.md", [row("log", 0, 1, b"one\n")])  # the same rev again
    assert bodies() == {}
    assert store.body_at("m.md", "log", 1) == b"one\n"  # answered from the row
    store.put_sections("m.md", [row("log", 0, 2, b"\xfftwo\n")])
    assert bodies() == {key("body/m.md", "log", n20(1)): "one\n"}
    store.put_sections("m.md", [row("log", 0, 2, b"", present=False)])  # gone: archived too
    assert bodies() == {
        key("body/m.md", "log", n20(1)): "one\n",
        key("body/m.md", "log", n20(2)): {"b64": base64.b64encode(b"\xfftwo\n").decode()},
    }
    assert store.body_at("m.md", "log", 2) == b"\xfftwo\n"


@etcd_only
def test_an_event_is_one_record_plus_its_index_keys(store: EtcdStore) -> None:
    with store.writing():
        one = store.append_event(TS[0], "a", "section.patched", "C.md", "build", {"reason": "m"})
        two = store.append_event(TS[1], "a", "file.indexed", "C.md", None, {})
        three = store.append_event(TS[2], "a", "claim.released", None, None, {"id": "c7"})
        four = store.append_event(TS[3], "a", "claim.expired", None, None, {"id": 7})  # no id
    keys = stored(store)
    record = json.loads(keys[key("ev/" + n20(1))])
    assert record == [
        *(TS[0], "a", "section.patched", "C.md", "build", {"reason": "m"}),
        *(one.prev, one.hash),
    ]
    assert keys[b"cache/events:head"] == f"4 {four.hash}".encode()
    assert under(store, b"evt/") == {
        key("evt/section.patched", TS[0], n20(1)): b'"m"',
        key("evt/file.indexed", TS[1], n20(2)): b"null",
        key("evt/claim.released", TS[2], n20(3)): b"null",
        key("evt/claim.expired", TS[3], n20(4)): b"null",
    }
    assert under(store, b"evp/") == {
        key("evp/C.md", "+build", n20(1)): b"",
        key("evp/C.md", "-", n20(2)): b"",
    }
    assert under(store, b"evl/") == {
        key("evl/C.md", "+build"): n20(1).encode(),
        key("evl/C.md", "-"): n20(2).encode(),
    }
    assert under(store, b"evc/") == {key("evc/c7", n20(3)): b""}  # claim ends by claim
    assert store.last_claim_event("c7") == three
    assert store.last_events("C.md") == {"build": one, None: two}


@etcd_only
def test_reconciliations_proposals_and_pending_writes_number_from_seq_keys(
    store: EtcdStore,
) -> None:
    with store.writing():
        rec, _ = store.open_reconciliation("s.md", "claims", "h", "g", "a", TS[0])
        prop = store.open_proposal("s.md", "build", 3, b"mine\n", "a", TS[0])
        store.put_pending(pending("s.md", 10.5, 7))
        store.put_pending(pending("s.md", 11.5, 8))
    keys = stored(store)
    assert (keys[b"seq/rec"], keys[b"seq/prop"], keys[b"seq/pend"]) == (b"1", b"1", b"2")
    assert json.loads(keys[key("rec/" + n20(1))]) == list(rec)
    assert keys[key("reco/s.md", "claims")] == b"1"  # the open one of the region
    assert json.loads(keys[key("prop/" + n20(1))]) == [*list(prop)[:4], "mine\n", *list(prop)[5:]]
    assert json.loads(keys[key("pend/s.md", n20(2))]) == list(pending("s.md", 11.5, 8))[1:]
    store.resolve_reconciliation(rec.id, "keep-human", "b", TS[1])
    assert key("reco/s.md", "claims") not in stored(store)
    assert json.loads(stored(store)[key("rec/" + n20(1))])[7:] == ["keep-human", "b", TS[1]]


@etcd_only
def test_a_pending_seq_is_never_handed_out_again_after_a_drop(store: EtcdStore) -> None:
    store.put_pending(pending("a.md", 1.0, 1))
    store.put_pending(pending("a.md", 2.0, 2))
    store.drop_pending("a.md")
    store.put_pending(pending("a.md", 3.0, 3))
    assert [(p.seq, p.new_inode) for p in store.pending("a.md")] == [(3, 3)]


@etcd_only
def test_claims_and_waiters_share_one_prefix_and_each_drop_changes_its_tables_marker(
    store: EtcdStore,
) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    store.put_claim(claim("c2", 2, NOW + 30))
    store.put_waiter(waiter("w1", 1))
    store.bump("token")
    rows = under(store, b"lease/")
    assert set(rows) == {
        key("lease/claim", "c1"),
        key("lease/claim", "c2"),
        key("lease/wait", "w1"),
    }
    fields = json.loads(rows[key("lease/claim", "c1")])
    assert fields[:9] == [1, "agent-a", "write", ["CLAUDE.md#build"], 0, False, NOW, NOW + 30, ""]
    assert fields[9] == lease_of(store, "c1") != 0  # the etcd lease and its TTL follow
    assert json.loads(rows[key("lease/wait", "w1")]) == [
        1, "agent-b", "read", ["docs/"], 5, True, 90.0, "review", 4242, NOW + 30, "waiting", None,
    ]  # fmt: skip
    assert stored(store)[b"ctr/token"] == b"1"
    markers = []
    for drop in ("c1", "c2"):
        store.drop_claim(drop)
        markers.append(stored(store)[key("lease/claim", "")])
    assert markers[0] != markers[1]
    assert key("lease/wait", "") not in stored(store)  # the waiters' table was not dropped from
    store.drop_waiter("w1")
    assert set(under(store, b"lease/")) == {key("lease/claim", ""), key("lease/wait", "")}
    assert store.claim_table() == ([], [])  # markers are no rows


@etcd_only
def test_a_waiter_put_again_is_replaced_and_a_reused_token_is_stored(store: EtcdStore) -> None:
    """(SQLite's primary key and UNIQUE token would refuse both: ids and tokens come from
    ``bump``, so neither happens.)"""
    store.put_waiter(waiter("w1", 1))
    store.put_waiter(waiter("w1", 2, priority=9))
    assert store.waiter_rows() == [waiter("w1", 2, priority=9)]
    store.put_claim(claim("c1", 7, NOW + 30))
    store.put_claim(claim("c2", 7, NOW + 30))
    assert [(c.id, c.token) for c in store.claim_rows()] == [("c1", 7), ("c2", 7)]


@etcd_only
def test_a_tally_is_keyed_by_its_rounded_time_and_counted_by_its_exact_one(
    store: EtcdStore,
) -> None:
    at = 100.0000004
    store.tally("conflict", at)
    store.tally("conflict", at)  # the same instant: a key of its own
    keys = under(store, b"tally/")
    assert len(keys) == 2
    assert all(k.startswith(key("tally/conflict", "0000000000100.000000", "")) for k in keys)
    assert {float(v) for v in keys.values()} == {at}
    assert store.tally_count("conflict", at) == 2
    assert store.tally_count("conflict", 100.0000005) == 0  # the same key prefix, but later


@etcd_only
def test_a_paths_ranges_end_at_its_nul_and_leave_a_longer_path_alone(
    store: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcdstore, "KEEP_VERSIONS", 1)
    monkeypatch.setattr(etcdstore, "PRUNE_VERSIONS", 1)
    for n, path in enumerate(("a.md.bak", "a.md")):
        store.put_pending(pending(path, 1.0, n))
        store.append_event(TS[n], "a", "file.indexed", path, None, {})
        store.keep_version(path, "sha256:1", 1)
    store.keep_version("a.md", "sha256:2", 2)  # prunes a.md's versions up to rev 1
    assert [p.path for p in store.pending("a.md")] == ["a.md"]
    assert [e.path for e in store.events_of("a.md", None, 10)] == ["a.md"]
    assert [e.path for e in store.last_events("a.md").values()] == ["a.md"]
    assert store.version_rev("a.md", "sha256:1") is None
    assert store.version_rev("a.md.bak", "sha256:1") == 1
    store.drop_pending("a.md")
    assert [p.path for p in store.pending("a.md.bak")] == ["a.md.bak"]
    assert stored(store)[key("ver/a.md", "sha256:2")] == b"2"


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
        assert store.any_live_claim(NOW)
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
def test_prefetching_outside_a_block_sends_nothing(store: EtcdStore) -> None:
    store.prefetch_file("C.md")
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


# -- conflicts ------------------------------------------------------------------------------


@etcd_only
def test_a_drop_of_pending_writes_meanwhile_fails_a_block_that_listed_them(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.put_pending(pending("a.md", 1.0, 1))

    def list_then_write() -> None:
        with store.writing():
            assert len(store.pending("a.md")) == 1
            other.drop_pending("a.md")  # a deletion, which a range's comparison alone passes
            store.put_pending(pending("b.md", 2.0, 2))

    with pytest.raises(StoreRetry):
        list_then_write()
    assert store.pending("a.md") == []
    assert store.pending("b.md") == []


@etcd_only
def test_two_blocks_drawing_the_same_proposal_id_cannot_both_commit(
    store: EtcdStore, other: EtcdStore
) -> None:
    theirs: list[Proposal] = []

    def open_while_they_do() -> None:
        with store.writing():
            mine = store.open_proposal("C.md", "build", 1, b"mine\n", "a", TS[0])
            theirs.append(other.open_proposal("C.md", "build", 1, b"theirs\n", "b", TS[0]))
            assert mine.id == theirs[0].id == 1

    with pytest.raises(StoreRetry):
        open_while_they_do()
    assert store.proposals() == theirs


@etcd_only
def test_a_version_read_in_a_block_is_left_out_of_its_comparisons(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.keep_version("C.md", "sha256:old", 1)
    with store.writing():
        assert store.version_rev("C.md", "sha256:old") == 1
        other.keep_version("C.md", "sha256:old", 5)  # the file went back to those bytes
        store.put_file("C.md", STATE)
    assert store.file_state("C.md") == STATE
    assert store.version_rev("C.md", "sha256:old") == 5


@etcd_only
def test_a_write_outside_a_block_commits_alone_and_retries_a_conflict(
    cluster: Cluster, prefix: bytes, other: EtcdStore
) -> None:
    raced = Interrupted(cluster.endpoints, lambda: other.put_pending(pending("a.md", 1.0, 100)))
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
    monkeypatch.setattr(etcdstore, "AUTOCOMMIT_ATTEMPTS", 3)
    raced = Interrupted(cluster.endpoints, lambda: (other.bump("token"), other.bump("token")))
    mine = EtcdStore(raced, prefix)
    raced.times = 3
    with pytest.raises(StoreRetry, match="lost to other writers 3 times"):
        mine.bump("token")
    assert other.bump("token") == 7  # six of theirs, none of mine
    mine.close()


@etcd_only
def test_two_racing_bumps_never_hand_out_one_value_twice(
    cluster: Cluster, prefix: bytes, other: EtcdStore
) -> None:
    theirs: list[int] = []
    raced = Interrupted(cluster.endpoints, lambda: theirs.append(other.bump("token")))
    racing = EtcdStore(raced, prefix)
    raced.times = 1
    mine = racing.bump("token")  # read 0, then theirs committed 1 before this commit
    racing.close()
    assert (theirs, mine) == ([1], 2)


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
def test_a_snapshot_compacted_away_meanwhile_is_a_store_retry(
    tmp_path: Path, prefix: bytes
) -> None:
    own = Cluster(tmp_path).start()  # compacting: not the shared cluster
    store = EtcdStore(Gateway(own.endpoints), prefix)

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
    assert stored(store) == {}


# -- claims held by etcd leases -------------------------------------------------------------


@etcd_only
def test_a_dropped_claims_lease_is_revoked_only_once_the_drop_commits(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    lease = lease_of(store, "c1")

    def drop(then: Callable[[], object]) -> None:
        with store.writing():
            store.claim_table()
            store.drop_claim("c1")
            then()

    def fail() -> None:
        raise RuntimeError("the operation failed after the drop")

    with pytest.raises(RuntimeError):
        drop(fail)
    assert store.gateway.time_to_live(lease) > 0
    with pytest.raises(StoreRetry):
        drop(lambda: other.put_waiter(waiter("w1", 1)))  # the table changed meanwhile
    assert store.gateway.time_to_live(lease) > 0
    assert store.claim_row("c1") == claim("c1", 1, NOW + 30)
    store.drop_claim("c1")
    assert store.gateway.time_to_live(lease) == -1


@etcd_only
def test_a_renewal_whose_lease_has_gone_takes_a_new_one(store: EtcdStore) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    lease = lease_of(store, "c1")
    with store.writing():
        store.claim_table()
        store.gateway.revoke(lease)  # it ran out meanwhile (and took the key with it)
        store.put_claim(claim("c1", 1, NOW + 20))
    renewed = lease_of(store, "c1")
    assert renewed not in (0, lease)
    assert store.gateway.time_to_live(renewed) > 0
    assert store.claim_row("c1") == claim("c1", 1, NOW + 20)


@etcd_only
def test_a_claim_stored_before_leases_is_read_renewed_onto_a_lease_and_dropped(
    store: EtcdStore,
) -> None:
    old = [1, "agent-a", "write", ["CLAUDE.md#build"], 0, False, NOW, NOW + 30, ""]
    store.gateway.put(store.prefix + key("lease/claim", "c1"), json.dumps(old).encode())
    assert store.claim_row("c1") == claim("c1", 1, NOW + 30)
    with store.writing():
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 40))
    lease = lease_of(store, "c1")
    assert lease != 0
    store.drop_claim("c1")
    assert store.claim_row("c1") is None
    assert store.gateway.time_to_live(lease) == -1


@etcd_only
@pytest.mark.parametrize("first", ["drop", "renew for longer"])
def test_a_claim_put_again_later_in_the_same_block_stays(store: EtcdStore, first: str) -> None:
    store.put_claim(claim("c1", 1, NOW + 30))
    with store.writing():
        store.claim_table()
        if first == "drop":
            store.drop_claim("c1")
        else:
            store.put_claim(claim("c1", 1, NOW + 300))
        store.put_claim(claim("c1", 1, NOW + 20))
    assert store.claim_row("c1") == claim("c1", 1, NOW + 20)  # as on SQLite


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
    store = EtcdStore.open(f"127.0.0.1:{free_port()},{cluster.spec}", prefix.decode())
    try:
        assert store.prefix == prefix
        store.put_file("a.md", STATE)
        assert store.file_state("a.md") == STATE
    finally:
        store.gateway.delete(prefix, etcdgw.prefix_end(prefix))
        store.close()
