"""One contract for every store backend: the same domain methods give the same answers on
SQLite (``Store``) and on etcd (``EtcdStore``, a single-member cluster, a fresh prefix per
test); then what only a shared etcd store must add — one event chain for concurrent writers,
a conflict when what a block read changed, ``store_unavailable`` when the cluster is gone."""

from __future__ import annotations

import functools
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memkeeper import events as ev
from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.errors import EnvironmentFailure
from memkeeper.records import Event, FileState, PendingWrite, SectionRow
from memkeeper.store import etcdstore
from memkeeper.store.etcdgw import Compare, Gateway, TxnResult
from memkeeper.store.etcdstore import LEASE_GRACE_S, EtcdStore, StoreRetry
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.files import KEEP_BODIES, PRUNE_EVERY
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
AnyStore = Store | EtcdStore
_prefixes = itertools.count(1)


def _etcd(cluster: Cluster, prefix: bytes) -> EtcdStore:
    return EtcdStore(Gateway(cluster.endpoints), prefix)


@pytest.fixture
def prefix() -> bytes:
    return f"/mk/contract{next(_prefixes)}/".encode()


@pytest.fixture(
    params=["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
)
def store(request: pytest.FixtureRequest, tmp_path: Path, prefix: bytes) -> Iterator[AnyStore]:
    opened: AnyStore
    if request.param == "sqlite":
        opened = Store.open(str(tmp_path))
    else:
        opened = _etcd(request.getfixturevalue("cluster"), prefix)
    yield opened
    opened.close()


def row(
    key: str,
    ord_: int,
    rev: int = 1,
    body: bytes = b"text\n",
    *,
    present: bool = True,
    base: str | None = None,
) -> SectionRow:
    heading = f"# {key}\n".encode()
    hash_ = ev.digest(heading + body) if present else None
    last = key.rsplit("/", 1)[-1]
    return SectionRow(
        key, ord_, rev, hash_, present, last, key.count("/") + 1, base or key, heading, body, 2
    )


STATE = FileState(3, "sha256:" + "ab" * 32)
ROWS = [
    row("_preamble", 0, body=b""),
    row("project", 1, 2, b"intro\r\n"),
    row("project/build", 2),
    row("project/build-2", 3, 4, b"\xff\xfe not utf-8\n", base="project/build"),
    row("testing", 4),
    row("gone", 2, 7, present=False),
]


def _index(store: AnyStore, path: str = "CLAUDE.md") -> None:
    with store.writing():
        store.put_sections(path, ROWS)
        store.put_file(path, STATE)


# -- files and sections -------------------------------------------------------------------


def test_files_and_sections_read_back(store: AnyStore) -> None:
    assert store.file_state("CLAUDE.md") is None
    assert store.indexed_section("CLAUDE.md", "project") is None
    assert store.section_candidates("CLAUDE.md", "project") == []
    _index(store)
    _index(store, "AGENTS.md")
    assert store.indexed_paths() == ["AGENTS.md", "CLAUDE.md"]
    assert store.file_state("CLAUDE.md") == STATE
    assert store.indexed_section("CLAUDE.md", "project/build-2") == (STATE, ROWS[3])
    assert store.indexed_section("CLAUDE.md", "gone") is None  # absent
    assert store.indexed_section("CLAUDE.md", "nope") is None
    assert store.sections("CLAUDE.md") == ROWS[:5]
    assert store.sections("CLAUDE.md", with_absent=True) == ROWS
    assert store.section_keys("CLAUDE.md") == [(r.key, r.base) for r in ROWS[:5]]


def test_candidates_and_splice_context(store: AnyStore) -> None:
    _index(store)
    assert [r.key for _, r in store.section_candidates("CLAUDE.md", "build")] == ["project/build"]
    by_base = store.section_candidates("CLAUDE.md", "project/build")
    assert [r.key for _, r in by_base] == ["project/build", "project/build-2"]
    assert all(state == STATE for state, _ in by_base)
    assert store.section_candidates("CLAUDE.md", "gone") == []
    sizes = [len(r.heading) + len(r.body) for r in ROWS[:5]]
    assert store.splice_context("CLAUDE.md", 3)[0] == sum(sizes[:3])
    assert store.splice_context("CLAUDE.md", 0)[0] == 0
    assert store.splice_context("CLAUDE.md", 1)[1] == b"# project/build\n"
    assert store.splice_context("CLAUDE.md", 8)[1] is None
    assert store.splice_context("CLAUDE.md", 2) == (sum(sizes[:2]), b"# project/build-2\n")
    assert store.splice_context("CLAUDE.md", 4) == (sum(sizes[:4]), None)


def test_put_sections_replaces_only_the_rows_given(store: AnyStore) -> None:
    _index(store)
    changed = row("testing", 4, 2, b"new\n")
    with store.writing():
        store.put_sections("CLAUDE.md", [changed])
        assert store.sections("CLAUDE.md")[-1] == changed  # read-your-writes
    assert store.sections("CLAUDE.md") == [*ROWS[:4], changed]


# -- bodies -------------------------------------------------------------------------------


def test_bodies_are_kept_then_pruned(store: AnyStore) -> None:
    last = KEEP_BODIES + PRUNE_EVERY + 5
    for rev in range(1, last + 1):
        with store.writing():
            store.put_sections("m.md", [row("log", 0, rev, f"body {rev}\n".encode())])
    kept = [rev for rev in range(1, last + 1) if store.body_at("m.md", "log", rev) is not None]
    assert kept == list(range(PRUNE_EVERY + 1, last + 1))
    assert store.body_at("m.md", "log", last) == f"body {last}\n".encode()
    assert store.body_at("m.md", "log", last - 3) == f"body {last - 3}\n".encode()
    assert store.body_at("m.md", "other", 1) is None


def test_a_body_outlives_its_sections_absence(store: AnyStore) -> None:
    with store.writing():
        store.put_sections("m.md", [row("a", 0, 3, b"three\n")])
    with store.writing():
        store.put_sections("m.md", [row("a", 0, 3, b"", present=False)])
    assert store.body_at("m.md", "a", 3) == b"three\n"
    with store.writing():
        store.keep_bodies("m.md", [row("b", 1, 9, b"\xffnine\n"), row("c", 2, present=False)])
    assert store.body_at("m.md", "b", 9) == b"\xffnine\n"
    assert store.body_at("m.md", "c", 1) is None


# -- events -------------------------------------------------------------------------------

TS = [ev.iso_utc(1_800_000_000 + n) for n in range(10)]


def _append_some(store: AnyStore) -> None:
    with store.writing():
        store.append_event(TS[0], "a", "section.patched", "CLAUDE.md", "build", {"rev": 2})
        store.append_event(TS[1], "a", "claim.granted", None, None, {"id": "c1"})
        store.append_event(TS[2], "b", "policy.violation", "CLAUDE.md", None, {"reason": "x"})
    with store.writing():
        store.append_event(TS[3], "b", "claim.released", None, None, {"id": "c1"})
        store.append_event(TS[4], "a", "section.patched", "CLAUDE.md", "build", {"rev": 3})
        store.append_event(TS[5], "b", "policy.violation", "AGENTS.md", None, {"reason": "y"})
        store.append_event(TS[6], "c", "claim.expired", None, None, {"id": "c1"})
        store.append_event(TS[7], "c", "section.patched", "CLAUDE.md", "test", {"é": "ü"})


def test_events_are_chained_and_listed(store: AnyStore) -> None:
    assert store.events() == []
    assert store.last_event() is None
    assert store.events_head() is None
    _append_some(store)
    events = store.events()
    assert [e.id for e in events] == list(range(1, 9))
    assert ev.chain_breaks(events) == []
    assert events[7].data == {"é": "ü"}
    assert store.last_event() == events[-1]
    assert store.events_head() == (8, events[-1].hash)
    assert store.events(since=5) == events[5:]
    assert store.events(since=2, limit=2) == events[2:4]
    assert store.events(since=8) == []


def test_append_returns_the_stored_event_and_sees_its_own_block(store: AnyStore) -> None:
    with store.writing():
        first = store.append_event(TS[0], "a", "x", None, None, {})
        second = store.append_event(TS[1], "a", "y", "p.md", "k", {"n": 1})
        assert store.last_event() == second
        assert store.events_head() == (2, second.hash)
    assert second.prev == first.hash
    assert store.events() == [first, second]


def ids(found: list[Event]) -> list[int]:
    return [e.id for e in found]


def test_events_filtered_and_counted(store: AnyStore) -> None:
    _append_some(store)
    assert ids(store.events_of("CLAUDE.md", "build", 10)) == [5, 1]
    assert ids(store.events_of("CLAUDE.md", "build", 1)) == [5]
    assert ids(store.events_of("CLAUDE.md", None, 10)) == [3]
    assert store.events_of("nowhere.md", None, 10) == []
    last = store.last_events("CLAUDE.md")
    assert {k: e.id for k, e in last.items()} == {"build": 5, None: 3, "test": 8}
    assert ids(store.events_typed(("policy.violation", "claim.granted"), TS[0])) == [2, 3, 6]
    assert ids(store.events_typed(("section.patched",), TS[4])) == [5, 8]
    assert store.events_typed(("nothing",), TS[0]) == []
    assert store.count_events("policy.violation", TS[0]) == 2
    assert store.count_events("policy.violation", TS[3]) == 1
    assert store.count_events("policy.violation", TS[0], reason="x") == 1
    assert store.count_events("policy.violation", TS[0], reason="z") == 0
    found = store.last_claim_event("c1")
    assert found is not None
    assert found.id == 7
    assert store.last_claim_event("c2") is None


# -- cache and tallies --------------------------------------------------------------------


def test_cache_inside_and_outside_a_block(store: AnyStore) -> None:
    assert store.cached("policy:abc") is None
    store.cache("policy:abc", '{"x": 1}')
    assert store.cached("policy:abc") == '{"x": 1}'
    with store.writing():
        store.cache("policy:abc", "2")
        assert store.cached("policy:abc") == "2"
    assert store.cached("policy:abc") == "2"


def test_tallies_count_and_forget(store: AnyStore) -> None:
    with store.writing():
        for at in (1000.0, 1500.5, 2000.25):
            store.tally("conflict", at, keep_s=3600.0)
        store.tally("other", 1600.0)
    assert store.tally_count("conflict", 0) == 3
    assert store.tally_count("conflict", 1500.5) == 2
    assert store.tally_count("conflict", 1500.6) == 1
    with store.writing():
        store.tally("conflict", 5000.0, keep_s=3600.0)  # forgets what is before 1400
    assert store.tally_count("conflict", 0) == 3
    assert store.tally_count("other", 0) == 1
    with store.writing():  # out of order: one older than the last one forgets
        store.tally("late", 9000.0, keep_s=3600.0)
        store.tally("late", 1000.0, keep_s=3600.0)
    assert store.tally_count("late", 0) == 2


# -- claims, the queue and counters (as tests/store/test_claimtables.py) ------------------

NOW = 1_700_000_000.0


def claim(id: str, token: int, expires_at: float, targets: tuple[str, ...] = ()) -> Claim:
    targets = targets or ("src/api/", "CLAUDE.md#inventory-service/build")
    return Claim(id, token, "agent-a", "write", targets, 0, False, NOW, expires_at, "")


def waiter(id: str, arrival: int, priority: int = 5) -> WaiterRow:
    request = Request(id, "agent-b", "read", ("docs/",), priority, True, 90.0, "review", arrival)
    return WaiterRow(request, 4242, NOW + 30, "waiting", None)


def test_tally_counts_occurrences_since_a_time(store: AnyStore) -> None:
    with store.writing():
        for at in (NOW, NOW + 10, NOW + 20):
            store.tally("conflict", at)
        store.tally("deadlock", NOW + 5)
    assert store.tally_count("conflict", NOW) == 3
    assert store.tally_count("conflict", NOW + 10) == 2
    assert store.tally_count("conflict", NOW + 21) == 0
    assert store.tally_count("deadlock", 0.0) == 1
    assert store.tally_count("never", 0.0) == 0


def test_a_tally_forgets_its_kinds_entries_older_than_the_window(store: AnyStore) -> None:
    with store.writing():
        store.tally("conflict", NOW)
        store.tally("deadlock", NOW)
        store.tally("conflict", NOW + 3601)
    assert store.tally_count("conflict", 0.0) == 1
    assert store.tally_count("deadlock", 0.0) == 1  # other kinds are left alone


def test_a_tally_keeps_what_is_inside_a_custom_window(store: AnyStore) -> None:
    with store.writing():
        store.tally("conflict", NOW)
        store.tally("conflict", NOW + 50, keep_s=60)
        store.tally("conflict", NOW + 100, keep_s=60)
    assert store.tally_count("conflict", 0.0) == 2


def test_bump_counts_each_counter_up_from_one(store: AnyStore) -> None:
    with store.writing():
        assert [store.bump("token") for _ in range(3)] == [1, 2, 3]
        assert store.bump("request") == 1
        assert store.bump("token") == 4
    with store.writing():
        assert store.bump("token") == 5
    assert store.bump("request") == 2  # outside a block: committed alone


def test_bump_dropped_with_its_block_hands_the_value_out_again(store: AnyStore) -> None:
    with store.writing():
        store.bump("token")

    def bump_then_fail() -> None:
        with store.writing():
            assert store.bump("token") == 2
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        bump_then_fail()
    with store.writing():
        assert store.bump("token") == 2


def test_a_claim_round_trips_field_for_field(store: AnyStore) -> None:
    stored = replace(claim("c1", 7, NOW + 120), strict=True, priority=3, objective="fix it é")
    with store.writing():
        store.put_claim(stored)
        assert store.claim_row("c1") == stored  # read-your-writes
    found = store.claim_row("c1")
    assert found == stored
    assert found is not None
    assert (found.targets, found.strict, type(found.expires_at)) == (stored.targets, True, float)
    assert store.claim_row("nope") is None


def test_claim_rows_come_in_token_order(store: AnyStore) -> None:
    with store.writing():
        for id, token in [("b", 5), ("a", 9), ("c", 1), ("c10", 10)]:
            store.put_claim(claim(id, token, NOW + 60))
    assert [c.id for c in store.claim_rows()] == ["c", "b", "a", "c10"]


def test_claim_rows_expired_by_a_time_lists_only_those_due(store: AnyStore) -> None:
    with store.writing():
        store.put_claim(claim("due", 1, NOW))
        store.put_claim(claim("live", 2, NOW + 60))
        store.put_claim(claim("long-due", 3, NOW - 600))
    assert [c.id for c in store.claim_rows(expired_by=NOW)] == ["due", "long-due"]
    assert len(store.claim_rows()) == 3  # expired ones stay until swept


def test_putting_a_claim_again_replaces_it(store: AnyStore) -> None:
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
        store.put_claim(claim("c1", 1, NOW + 600))
    (only,) = store.claim_rows()
    assert only.expires_at == NOW + 600
    store.put_claim(claim("c1", 1, NOW + 900))  # outside a block: committed alone
    assert store.claim_rows() == [claim("c1", 1, NOW + 900)]


def test_a_dropped_claim_is_gone(store: AnyStore) -> None:
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
        store.put_claim(claim("c2", 2, NOW + 60))
        store.drop_claim("c1")
        assert [c.id for c in store.claim_rows()] == ["c2"]
    assert [c.id for c in store.claim_rows()] == ["c2"]
    assert store.claim_row("c1") is None
    store.drop_claim("c2")
    store.drop_claim("never")  # nothing to drop: nothing happens
    assert store.claim_rows() == []
    assert store.claim_table() == ([], [])


def test_any_live_claim_counts_a_claim_until_its_expiry(store: AnyStore) -> None:
    assert store.any_live_claim(NOW) is False
    with store.writing():
        store.put_claim(claim("c1", 1, NOW + 60))
    assert store.any_live_claim(NOW) is True
    assert store.any_live_claim(NOW + 59.9) is True
    assert store.any_live_claim(NOW + 60) is False


def test_earliest_expiry_is_the_soonest_live_one(store: AnyStore) -> None:
    assert store.earliest_expiry(NOW) is None
    with store.writing():
        store.put_claim(claim("late", 1, NOW + 300))
        store.put_claim(claim("soon", 2, NOW + 30))
        store.put_claim(claim("past", 3, NOW - 1))
    assert store.earliest_expiry(NOW) == NOW + 30
    assert store.earliest_expiry(NOW + 30) == NOW + 300
    assert store.earliest_expiry(NOW + 300) is None


def test_a_waiter_round_trips_with_its_request(store: AnyStore) -> None:
    stored = waiter("w1", 1)
    with store.writing():
        store.put_waiter(stored)
    (loaded,) = store.waiter_rows()
    assert loaded == stored
    assert loaded.request.targets == ("docs/",)
    assert loaded.request.strict is True
    assert type(loaded.request.ttl) is float


def test_waiters_come_in_arrival_order_whatever_their_priority(store: AnyStore) -> None:
    with store.writing():
        for id, arrival, priority in [("w3", 3, 9), ("w1", 1, 0), ("w10", 10, 1), ("w2", 2, 5)]:
            store.put_waiter(waiter(id, arrival, priority))
    assert [w.request.id for w in store.waiter_rows()] == ["w1", "w2", "w3", "w10"]


def test_settling_a_waiter_records_its_outcome_and_reason(store: AnyStore) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
        store.put_waiter(waiter("w2", 2))
        store.settle_waiter("w1", "aborted", "deadlock")
        store.settle_waiter("w2", "granted")
        store.settle_waiter("nope", "granted")  # no such wait: nothing happens
    settled = {w.request.id: (w.state, w.reason) for w in store.waiter_rows()}
    assert settled == {"w1": ("aborted", "deadlock"), "w2": ("granted", None)}
    store.settle_waiter("w2", "aborted", "timeout")  # outside a block: committed alone
    assert store.waiter_rows()[1] == waiter("w2", 2)._replace(state="aborted", reason="timeout")


def test_a_dropped_waiter_is_gone(store: AnyStore) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
        store.put_waiter(waiter("w2", 2))
        store.drop_waiter("w1")
    assert store.waiter_rows() == [waiter("w2", 2)]
    store.drop_waiter("w2")
    assert store.waiter_rows() == []


def test_the_claim_table_is_both_tables_in_their_orders(store: AnyStore) -> None:
    assert store.claim_table() == ([], [])
    with store.writing():
        for id, token in [("b", 5), ("a", 9), ("gone", 1)]:
            store.put_claim(claim(id, token, NOW + 60 if id != "gone" else NOW - 1))
        for id, arrival in [("w3", 3), ("w1", 1)]:
            store.put_waiter(waiter(id, arrival))
        store.settle_waiter("w1", "aborted", "deadlock")
    claims, waiters = store.claim_table()
    assert claims == store.claim_rows()  # expired ones too: the caller sweeps them
    assert [c.id for c in claims] == ["gone", "b", "a"]
    assert waiters == store.waiter_rows()
    assert [(w.request.id, w.state, w.reason) for w in waiters] == [
        ("w1", "aborted", "deadlock"),
        ("w3", "waiting", None),
    ]
    with store.reading():
        assert store.claim_table() == (claims, waiters)


def test_the_claim_table_with_claims_only_or_waiters_only(store: AnyStore) -> None:
    with store.writing():
        store.put_waiter(waiter("w1", 1))
    assert store.claim_table() == ([], [waiter("w1", 1)])
    with store.writing():
        store.drop_waiter("w1")
        store.put_claim(claim("c1", 1, NOW + 60))
        assert store.claim_table() == ([claim("c1", 1, NOW + 60)], [])  # read-your-writes
    assert store.claim_table() == ([claim("c1", 1, NOW + 60)], [])


def test_a_lease_block_that_raises_leaves_nothing(store: AnyStore) -> None:
    with store.writing():
        store.put_claim(claim("kept", 1, NOW + 60))
        store.put_waiter(waiter("w1", 1))

    def everything_then_fail() -> None:
        with store.writing():
            store.bump("token")
            store.put_claim(claim("c2", 2, NOW + 60))
            store.drop_claim("kept")
            store.settle_waiter("w1", "granted")
            store.put_waiter(waiter("w2", 2))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        everything_then_fail()
    assert store.claim_table() == ([claim("kept", 1, NOW + 60)], [waiter("w1", 1)])
    assert store.bump("token") == 1


# -- reconciliations, proposals, pending --------------------------------------------------


def test_reconciliations_open_refresh_resolve(store: AnyStore) -> None:
    with store.writing():
        first, opened = store.open_reconciliation("s.md", "claims", "h1", "g1", "a", TS[0])
    assert opened
    assert (first.id, first.human, first.resolution) == (1, "h1", None)
    with store.writing():
        again, opened = store.open_reconciliation("s.md", "claims", "h2", "g2", "b", TS[1])
        other, _ = store.open_reconciliation("t.md", "events", "h", "g", "b", TS[1])
    assert not opened
    assert again == first._replace(human="h2", generated="g2")
    assert other.id == 2
    assert store.reconciliations() == [again, other]
    assert store.reconciliations(path="t.md") == [other]
    assert store.reconciliation(1) == again
    assert store.reconciliation(99) is None
    with store.writing():
        store.resolve_reconciliation(1, "keep-human", "c", TS[2])
        store.resolve_reconciliation(1, "take-generated", "d", TS[3])  # already resolved
    assert store.reconciliations() == [other]
    resolved = again._replace(resolution="keep-human", resolved_by="c", resolved_at=TS[2])
    assert store.reconciliations(resolved=True) == [resolved, other]
    with store.writing():
        reopened, opened = store.open_reconciliation("s.md", "claims", "h3", "g3", "a", TS[4])
    assert opened
    assert reopened.id == 3


def test_proposals_open_and_close(store: AnyStore) -> None:
    with store.writing():
        one = store.open_proposal("C.md", "build", 3, b"mine\n", "a", TS[0])
        two = store.open_proposal("C.md", "test", 1, b"\xff\n", "b", TS[1])
    assert (one.id, two.id, one.state) == (1, 2, "open")
    assert store.proposals() == [one, two]
    with store.writing():
        store.close_proposal(1, "applied", "a", TS[2], rev=4)
        store.close_proposal(1, "dropped", "b", TS[3])  # closed already
    applied = one._replace(state="applied", closed_by="a", closed_at=TS[2], rev=4)
    assert store.proposals() == [two]
    assert store.proposals(closed=True) == [applied, two]
    assert store.proposal(1) == applied
    assert store.proposal(2) == two
    assert store.proposal(3) is None


def _pending(path: str, at: float, new_inode: int) -> PendingWrite:
    return PendingWrite(0, path, None, None, None, None, new_inode, "sha256:x", ".tmp", at)


def test_pending_put_count_paths_drop(store: AnyStore) -> None:
    with store.writing():
        store.put_pending(_pending("a.md", 10.0, 1))
        store.put_pending(_pending("b.md", 30.0, 2))
        store.put_pending(_pending("a.md", 20.0, 3))
    found = store.pending("a.md")
    assert [(p.path, p.new_inode, p.at) for p in found] == [("a.md", 1, 10.0), ("a.md", 3, 20.0)]
    assert found[0].seq < found[1].seq
    assert found[0] == _pending("a.md", 10.0, 1)._replace(seq=found[0].seq)
    assert store.pending_count("a.md") == (2, 10.0)
    assert store.pending_count("c.md") == (0, None)
    assert store.pending_paths(before=25.0) == ["a.md"]
    assert store.pending_paths(before=35.0) == ["a.md", "b.md"]
    with store.writing():
        store.drop_pending("a.md")
        assert store.pending("a.md") == []
    assert store.pending("a.md") == []
    assert [p.path for p in store.pending("b.md")] == ["b.md"]
    with store.writing():  # dropped, then a new one, in one block
        store.drop_pending("b.md")
        store.put_pending(_pending("b.md", 40.0, 4))
        store.put_pending(_pending("b.md", 41.0, 5))
    assert [p.new_inode for p in store.pending("b.md")] == [4, 5]


# -- transactions -------------------------------------------------------------------------


def test_a_block_that_raises_leaves_nothing(store: AnyStore) -> None:
    def everything_then_fail() -> None:
        with store.writing():
            store.put_sections("CLAUDE.md", ROWS)
            store.put_file("CLAUDE.md", STATE)
            store.append_event(TS[0], "a", "x", "CLAUDE.md", None, {})
            store.cache("k", "v")
            store.open_reconciliation("CLAUDE.md", "r", "h", "g", "a", TS[0])
            store.put_pending(_pending("CLAUDE.md", 1.0, 1))
            assert store.file_state("CLAUDE.md") == STATE
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        everything_then_fail()
    assert store.file_state("CLAUDE.md") is None
    assert store.sections("CLAUDE.md", with_absent=True) == []
    assert store.events() == []
    assert store.events_head() is None
    assert store.cached("k") is None
    assert store.reconciliations(resolved=True) == []
    assert store.pending("CLAUDE.md") == []


def test_reading_sees_one_snapshot(store: AnyStore) -> None:
    _index(store)
    with store.reading():
        assert store.file_state("CLAUDE.md") == STATE
        assert store.section_keys("CLAUDE.md")[0] == ("_preamble", "_preamble")


# -- etcd only ----------------------------------------------------------------------------

etcd_only = pytest.mark.skipif(EXE is None, reason=WHY)


def _retrying(store: EtcdStore, work: Any) -> Any:
    """``work()`` in a ``writing()`` block of ``store``, run again while it conflicts."""
    while True:
        try:
            with store.writing():
                return work()
        except StoreRetry:
            continue


def _race(
    cluster: Cluster, prefix: bytes, per_thread: int, work: Callable[[EtcdStore, str, int], object]
) -> None:
    """Two stores on ``prefix``, ``a`` and ``b``, each in a thread of its own, run
    ``work(store, actor, n)`` for each ``n`` below ``per_thread``, each in a ``writing()``
    block retried while it conflicts; nothing may go wrong in either."""
    errors: list[Exception] = []

    def run(actor: str) -> None:
        mine = _etcd(cluster, prefix)
        try:
            for n in range(per_thread):
                _retrying(mine, functools.partial(work, mine, actor, n))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            mine.close()

    threads = [threading.Thread(target=run, args=(actor,)) for actor in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []


@etcd_only
def test_concurrent_appends_make_one_chain(cluster: Cluster, prefix: bytes) -> None:
    per_thread = 20

    def append(store: EtcdStore, actor: str, n: int) -> None:
        store.append_event(TS[n % 10], actor, "emit", "x.md", None, {"n": n})

    _race(cluster, prefix, per_thread, append)
    reader = _etcd(cluster, prefix)
    events = reader.events()
    assert [e.id for e in events] == list(range(1, 2 * per_thread + 1))
    assert ev.chain_breaks(events) == []
    assert sorted(e.actor for e in events) == ["a"] * per_thread + ["b"] * per_thread
    assert reader.events_head() == (2 * per_thread, events[-1].hash)
    assert len(reader.events_of("x.md", None, 100)) == 2 * per_thread
    reader.close()


@etcd_only
def test_a_block_whose_read_changed_retries_and_applies_nothing(
    cluster: Cluster, prefix: bytes
) -> None:
    one, other = _etcd(cluster, prefix), _etcd(cluster, prefix)
    _index(one)

    def patch_while_another_does() -> None:
        with one.writing():
            found = one.indexed_section("CLAUDE.md", "testing")
            assert found is not None
            with other.writing():  # another machine patches that section meanwhile
                other.put_sections("CLAUDE.md", [row("testing", 4, 2, b"theirs\n")])
                other.put_file("CLAUDE.md", FileState(4, "sha256:theirs"))
            one.put_sections("CLAUDE.md", [row("testing", 4, 2, b"mine\n")])
            one.put_file("CLAUDE.md", FileState(4, "sha256:mine"))
            one.append_event(TS[0], "one", "section.patched", "CLAUDE.md", "testing", {})

    with pytest.raises(StoreRetry):
        patch_while_another_does()
    assert one.file_state("CLAUDE.md") == FileState(4, "sha256:theirs")
    assert one.sections("CLAUDE.md")[-1].body == b"theirs\n"
    assert one.events() == []
    assert one.body_at("CLAUDE.md", "testing", 1) == b"text\n"  # archived by theirs
    one.close()
    other.close()


@etcd_only
def test_concurrent_grants_from_two_stores_get_tokens_one_to_n(
    cluster: Cluster, prefix: bytes
) -> None:
    per_thread = 15

    def grant(store: EtcdStore, actor: str, n: int) -> None:
        store.claim_table()  # as every lease operation starts
        token = store.bump("token")
        store.put_claim(claim(f"{actor}{n}", token, NOW + 60, (f"{actor}/{n}.md",)))

    _race(cluster, prefix, per_thread, grant)
    reader = _etcd(cluster, prefix)
    claims = reader.claim_rows()
    assert [c.token for c in claims] == list(range(1, 2 * per_thread + 1))  # no gap, no twice
    assert sorted(c.id for c in claims) == sorted(
        f"{actor}{n}" for actor in "ab" for n in range(per_thread)
    )
    for actor in "ab":  # each store's grants in its own order
        mine = [c for c in claims if c.id.startswith(actor)]
        assert [c.id for c in mine] == [f"{actor}{n}" for n in range(per_thread)]
    assert reader.bump("token") == 2 * per_thread + 1
    reader.close()


@etcd_only
def test_a_claim_of_a_target_another_store_claims_meanwhile_retries_and_sees_it(
    cluster: Cluster, prefix: bytes
) -> None:
    one, other = _etcd(cluster, prefix), _etcd(cluster, prefix)
    target = ("CLAUDE.md#build",)
    attempts: list[list[Claim]] = []

    def claim_unless_held(store: EtcdStore, id: str, interleave: bool) -> Claim | None:
        held, _ = store.claim_table()
        attempts.append(held)
        if any(set(c.targets) & set(target) for c in held):
            return None  # busy: somebody holds it
        if interleave and len(attempts) == 1:  # another machine claims it meanwhile
            assert _retrying(other, lambda: claim_unless_held(other, "theirs", False))
        granted = claim(id, store.bump("token"), NOW + 60, target)
        store.put_claim(granted)
        return granted

    with pytest.raises(StoreRetry), one.writing():
        claim_unless_held(one, "mine", True)
    assert [c.id for c in one.claim_rows()] == ["theirs"]  # nothing of "mine" was applied
    assert _retrying(one, lambda: claim_unless_held(one, "mine", True)) is None
    assert [[c.id for c in held] for held in attempts] == [[], [], ["theirs"]]
    assert one.claim_rows() == [claim("theirs", 1, NOW + 60, target)]
    assert one.bump("token") == 2  # the lost block's token was never handed out
    one.close()
    other.close()


@etcd_only
@pytest.mark.parametrize("meanwhile", ["drop_claim", "drop_waiter", "settle_waiter"])
def test_a_change_of_the_table_meanwhile_fails_a_block_that_read_it(
    cluster: Cluster, prefix: bytes, meanwhile: str
) -> None:
    one, other = _etcd(cluster, prefix), _etcd(cluster, prefix)
    one.put_claim(claim("c1", 1, NOW + 60))
    one.put_waiter(waiter("w1", 1))
    changes: dict[str, Callable[[], None]] = {
        "drop_claim": lambda: other.drop_claim("c1"),  # deletions: seen by the range's marker
        "drop_waiter": lambda: other.drop_waiter("w1"),
        "settle_waiter": lambda: other.settle_waiter("w1", "granted"),
    }
    change = changes[meanwhile]

    def queue_behind_what_it_read() -> None:
        with one.writing():
            assert one.claim_table() == ([claim("c1", 1, NOW + 60)], [waiter("w1", 1)])
            change()
            one.put_waiter(waiter("w2", 2))  # queued behind a table that changed

    with pytest.raises(StoreRetry):
        queue_behind_what_it_read()
    assert all(w.request.id != "w2" for w in one.waiter_rows())
    one.close()
    other.close()


@etcd_only
def test_a_commit_resent_after_its_answer_was_lost_counts_once(
    cluster: Cluster, prefix: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _etcd(cluster, prefix)
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
    """(SQLite's counts only other connections' commits: tests/store/test_sqlite.py.)"""
    store = _etcd(cluster, prefix)
    before = store.data_version()
    store.cache("k", "v")
    assert store.data_version() > before
    store.close()


@etcd_only
def test_a_change_too_big_for_one_etcd_txn_is_refused_whole(
    cluster: Cluster, prefix: bytes
) -> None:
    big = _etcd(cluster, prefix)
    many = [row(f"s{n}", n) for n in range(300)]
    with big.writing():
        big.put_sections("big.md", many)  # one key: fine at any section count
    changed = [r._replace(rev=2, body=b"changed\n") for r in many]
    with pytest.raises(EnvironmentFailure) as caught, big.writing():
        big.put_sections("big.md", changed)  # 300 bodies to archive: too many operations
    assert caught.value.fields["reason"] == "store_too_large"
    assert big.sections("big.md") == many
    big.close()


@etcd_only
def test_a_stopped_cluster_is_store_unavailable(tmp_path: Path, prefix: bytes) -> None:
    own = Cluster(tmp_path).start()
    gone = _etcd(own, prefix)
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


# -- claims as etcd leases ----------------------------------------------------------------------


def _lease_of(store: EtcdStore, claim_id: str) -> int:
    _, found = store.gateway.range(store._key("lease", "claim", claim_id))
    return found[0].lease if found else 0


@etcd_only
def test_a_claims_key_is_held_by_an_etcd_lease_of_its_ttl(cluster: Cluster, prefix: bytes) -> None:
    store = _etcd(cluster, prefix)
    with store.writing():
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 30))
    lease = _lease_of(store, "c1")
    assert lease != 0
    assert 30 <= store.gateway.time_to_live(lease) <= 30 + LEASE_GRACE_S
    with store.writing():  # a renewal the lease covers: a keep-alive of the same lease
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 20))
    assert _lease_of(store, "c1") == lease
    with store.writing():  # a longer one: a new lease, the old one revoked
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 300))
    longer = _lease_of(store, "c1")
    assert longer not in (0, lease)
    assert store.gateway.time_to_live(lease) == -1
    with store.writing():
        store.claim_table()
        store.drop_claim("c1")
    assert store.gateway.time_to_live(longer) == -1  # released: revoked
    store.close()


@etcd_only
def test_a_claim_nobody_renews_leaves_the_store_by_itself(cluster: Cluster, prefix: bytes) -> None:
    """Every machine of a fleet died holding claims: etcd removes them at their TTL (plus
    the grace), with no memkeeper left to sweep."""
    store = _etcd(cluster, prefix)
    with store.writing():
        store.claim_table()
        store.put_claim(claim("c1", 1, NOW + 1))
    store.close()
    reader = _etcd(cluster, prefix)
    deadline = time.monotonic() + 1 + LEASE_GRACE_S + 2
    while reader.claim_row("c1") is not None:
        assert time.monotonic() < deadline, "the claim outlived its lease"
        time.sleep(0.1)
    reader.close()


@etcd_only
def test_the_versions_of_a_file_are_kept_for_its_last_revs_only(
    cluster: Cluster, prefix: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcdstore, "KEEP_VERSIONS", 8)
    monkeypatch.setattr(etcdstore, "PRUNE_VERSIONS", 4)
    store = _etcd(cluster, prefix)
    for rev in range(1, 21):
        with store.writing():
            store.keep_version("CLAUDE.md", f"sha256:{rev}", rev)
    kept = [rev for rev in range(1, 21) if store.version_rev("CLAUDE.md", f"sha256:{rev}")]
    assert kept == list(range(13, 21))  # 20 - 8 = 12 and older went at rev 20
    assert store.version_rev("CLAUDE.md", "sha256:20") == 20
    assert store.version_rev("AGENTS.md", "sha256:20") is None  # per file
    store.close()


def test_a_local_store_knows_no_other_versions(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path))
    store.keep_version("CLAUDE.md", "sha256:1", 1)
    assert store.version_rev("CLAUDE.md", "sha256:1") is None
    store.close()
