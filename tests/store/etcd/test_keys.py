"""The etcd store's key layout (``keys``): every key lies under the prefix, which gains its
slash; a path's ranges end at its NUL, leaving a longer path alone; ids come from ``P/seq/``
keys; the format key; and the layout's pure helpers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memkeeper.store.etcd import EtcdStore, keys
from memkeeper.store.etcd import files as etcd_files
from tests.store.etcd.conftest import (
    STATE,
    TS,
    etcd_only,
    key,
    n20,
    pending,
    stored,
)

if TYPE_CHECKING:
    import pytest

    from tests.etcd_cluster import Cluster


@etcd_only
def test_the_prefix_gains_its_slash_and_holds_every_key(cluster: Cluster, store: EtcdStore) -> None:
    bare = EtcdStore(cluster.gateway(), store.prefix.rstrip(b"/"))
    try:
        assert bare.prefix == store.prefix
        bare.put_file("a.md", STATE)
    finally:
        bare.close()
    assert store.file_state("a.md") == STATE
    # P/file/<path>, the slash added; P/format, the layout's version
    assert list(stored(store)) == [b"file/a.md", b"format"]


@etcd_only
def test_reconciliations_proposals_and_pending_writes_number_from_seq_keys(
    store: EtcdStore,
) -> None:
    with store.writing():
        rec, _ = store.reconciliations.open_reconciliation("s.md", "claims", "h", "g", "a", TS[0])
        prop = store.proposals.open_proposal("s.md", "build", 3, b"mine\n", "a", TS[0])
        store.put_pending(pending("s.md", 10.5, 7))
        store.put_pending(pending("s.md", 11.5, 8))
    keys = stored(store)
    assert (keys[b"seq/rec"], keys[b"seq/prop"], keys[b"seq/pend"]) == (b"1", b"1", b"2")
    assert json.loads(keys[key("rec/" + n20(1))]) == list(rec)
    assert keys[key("reco/s.md", "claims")] == b"1"  # the open one of the region
    assert json.loads(keys[key("prop/" + n20(1))]) == [*list(prop)[:4], "mine\n", *list(prop)[5:]]
    assert json.loads(keys[key("pend/s.md", n20(2))]) == list(pending("s.md", 11.5, 8))[1:]
    store.reconciliations.resolve_reconciliation(rec.id, "keep-human", "b", TS[1])
    assert key("reco/s.md", "claims") not in stored(store)
    assert json.loads(stored(store)[key("rec/" + n20(1))])[7:] == ["keep-human", "b", TS[1]]


@etcd_only
def test_a_paths_ranges_end_at_its_nul_and_leave_a_longer_path_alone(
    store: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcd_files, "KEEP_VERSIONS", 1)
    monkeypatch.setattr(etcd_files, "PRUNE_VERSIONS", 1)
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


# -- the layout's helpers ------------------------------------------------------------------------


def test_a_key_is_the_prefix_the_table_and_its_parts_joined_by_nul() -> None:
    assert keys.key(b"/p/", "file", "docs/a.md") == b"/p/file/docs/a.md"
    assert keys.key(b"/p/", "evp", "a.md", "+build", "") == b"/p/evp/a.md\0+build\0"
    assert keys.key(b"/p/", "lease", "") == b"/p/lease/"
    assert keys.format_key(b"/p/") == b"/p/format"


def test_numbers_and_times_sort_as_they_compare() -> None:
    assert keys.number(42) == "00000000000000000042"
    assert sorted([keys.number(n) for n in (10, 9, 100)]) == [keys.number(n) for n in (9, 10, 100)]
    assert keys.number_of(b"/p/ev/" + keys.number(123).encode()) == 123
    assert keys.at(100.0000004) == "0000000000100.000000"
    assert sorted([keys.at(t) for t in (99.5, 1000.25, 100.0)]) == [
        keys.at(t) for t in (99.5, 100.0, 1000.25)
    ]


def test_an_events_section_is_minus_for_the_whole_file_and_plus_its_key() -> None:
    assert keys.about(None) == "-"
    assert keys.about("build/test") == "+build/test"
