"""The contract of files, sections and bodies: read back (one file, or every file's hash and
section count at once), candidates and splice context, a put of some rows, bodies kept then
pruned and outliving their section; on etcd, a block whose read changed, a change too big for
one transaction, the versions of a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.records import FileState
from memkeeper.store.bodies import KEEP_BODIES, PRUNE_EVERY
from memkeeper.store.etcd import files as etcd_files
from memkeeper.store.retry import StoreRetry
from tests.store.contract.conftest import (
    ROWS,
    STATE,
    TS,
    etcd_on,
    etcd_only,
    index,
    row,
)

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore
    from tests.etcd_cluster import Cluster


def test_files_and_sections_read_back(store: StateStore) -> None:
    assert store.file_state("CLAUDE.md") is None
    assert store.indexed_section("CLAUDE.md", "project") is None
    assert store.section_candidates("CLAUDE.md", "project") == []
    index(store)
    index(store, "AGENTS.md")
    assert store.indexed_paths() == ["AGENTS.md", "CLAUDE.md"]
    assert store.file_state("CLAUDE.md") == STATE
    assert store.indexed_section("CLAUDE.md", "project/build-2") == (STATE, ROWS[3])
    assert store.indexed_section("CLAUDE.md", "gone") is None  # absent
    assert store.indexed_section("CLAUDE.md", "nope") is None
    assert store.sections("CLAUDE.md") == ROWS[:5]
    assert store.sections("CLAUDE.md", with_absent=True) == ROWS
    assert store.section_keys("CLAUDE.md") == [(r.key, r.base) for r in ROWS[:5]]
    assert store.section_row("CLAUDE.md", "project/build-2") == ROWS[3]
    assert store.section_row("CLAUDE.md", "gone") == ROWS[5]  # absent rows too
    assert store.section_row("CLAUDE.md", "nope") is None
    assert store.section_row("README.md", "gone") is None


def test_every_file_s_hash_and_section_count_in_one_read(store: StateStore) -> None:
    assert store.file_hashes() == {}
    assert store.section_counts(["CLAUDE.md"]) == {}
    index(store)
    index(store, "AGENTS.md")
    assert store.file_hashes() == {"AGENTS.md": STATE.file_hash, "CLAUDE.md": STATE.file_hash}
    present = len([r for r in ROWS if r.present])
    assert store.section_counts(["CLAUDE.md", "nope.md"]) == {"CLAUDE.md": present}
    assert store.section_counts(["AGENTS.md", "CLAUDE.md"]) == {
        "AGENTS.md": present,
        "CLAUDE.md": present,
    }


def test_candidates_and_splice_context(store: StateStore) -> None:
    index(store)
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


def test_put_sections_replaces_only_the_rows_given(store: StateStore) -> None:
    index(store)
    changed = row("testing", 4, 2, b"new\n")
    with store.writing():
        store.put_sections("CLAUDE.md", [changed])
        assert store.sections("CLAUDE.md")[-1] == changed  # read-your-writes
    assert store.sections("CLAUDE.md") == [*ROWS[:4], changed]


# -- bodies ---------------------------------------------------------------------------------


def test_bodies_are_kept_then_pruned(store: StateStore) -> None:
    last = KEEP_BODIES + PRUNE_EVERY + 5
    for rev in range(1, last + 1):
        with store.writing():
            store.put_sections("m.md", [row("log", 0, rev, f"body {rev}\n".encode())])
    kept = [rev for rev in range(1, last + 1) if store.body_at("m.md", "log", rev) is not None]
    assert kept == list(range(PRUNE_EVERY + 1, last + 1))
    assert store.body_at("m.md", "log", last) == f"body {last}\n".encode()
    assert store.body_at("m.md", "log", last - 3) == f"body {last - 3}\n".encode()
    assert store.body_at("m.md", "other", 1) is None


def test_a_body_outlives_its_sections_absence(store: StateStore) -> None:
    with store.writing():
        store.put_sections("m.md", [row("a", 0, 3, b"three\n")])
    with store.writing():
        store.put_sections("m.md", [row("a", 0, 3, b"", present=False)])
    assert store.body_at("m.md", "a", 3) == b"three\n"
    with store.writing():
        store.keep_bodies("m.md", [row("b", 1, 9, b"\xffnine\n"), row("c", 2, present=False)])
    assert store.body_at("m.md", "b", 9) == b"\xffnine\n"
    assert store.body_at("m.md", "c", 1) is None


# -- etcd only ------------------------------------------------------------------------------


@etcd_only
def test_a_block_whose_read_changed_retries_and_applies_nothing(
    cluster: Cluster, prefix: bytes
) -> None:
    one, other = etcd_on(cluster, prefix), etcd_on(cluster, prefix)
    index(one)

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
def test_a_change_too_big_for_one_etcd_txn_is_refused_whole(
    cluster: Cluster, prefix: bytes
) -> None:
    big = etcd_on(cluster, prefix)
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
def test_the_versions_of_a_file_are_kept_for_its_last_revs_only(
    cluster: Cluster, prefix: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcd_files, "KEEP_VERSIONS", 8)
    monkeypatch.setattr(etcd_files, "PRUNE_VERSIONS", 4)
    store = etcd_on(cluster, prefix)
    for rev in range(1, 21):
        with store.writing():
            store.keep_version("CLAUDE.md", f"sha256:{rev}", rev)
    kept = [rev for rev in range(1, 21) if store.version_rev("CLAUDE.md", f"sha256:{rev}")]
    assert kept == list(range(13, 21))  # 20 - 8 = 12 and older went at rev 20
    assert store.version_rev("CLAUDE.md", "sha256:20") == 20
    assert store.version_rev("AGENTS.md", "sha256:20") is None  # per file
    store.close()
