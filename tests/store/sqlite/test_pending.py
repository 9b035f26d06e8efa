"""The pending table of a real SQLite store, statement by statement: the store numbers the
rows whatever ``seq`` they come with and keeps every field exactly; a path's rows come back
in commit order, matched exactly (no prefix, no LIKE); the count's oldest is the least ``at``;
``pending_paths`` lists each path once, sorted, strictly before the time; a drop takes all of
one path's rows and nothing else. (What both backends share: tests/store/contract/.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.records import PendingWrite
from memkeeper.store.sqlite import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(str(tmp_path / ".memkeeper"))
    yield opened
    opened.close()


def write(path: str, at: float, new_inode: int = 7, seq: int = 0) -> PendingWrite:
    return PendingWrite(seq, path, None, None, None, None, new_inode, "sha256:new", ".t~", at)


def put(store: Store, *writes: PendingWrite) -> None:
    with store.writing():
        for one in writes:
            store.put_pending(one)


def rows(store: Store) -> list[tuple[object, ...]]:
    return store._db.execute("SELECT seq, path, at FROM pending ORDER BY seq").fetchall()


def test_the_store_numbers_the_rows_whatever_seq_they_come_with(store: Store) -> None:
    put(store, write("a.md", 1.0, seq=99), write("a.md", 2.0, seq=99), write("b.md", 3.0, seq=-5))
    assert rows(store) == [(1, "a.md", 1.0), (2, "a.md", 2.0), (3, "b.md", 3.0)]
    assert [p.seq for p in store.pending("a.md")] == [1, 2]


def test_every_field_comes_back_exactly(store: Store) -> None:
    full = PendingWrite(
        0, "docs/ä.md", 2**40, 1_700_000_000_123_456_789, 0, "sha256:old", 3, "sha256:new",
        ".docs-ä.md.mk~1", 1_700_000_000.123456,
    )  # fmt: skip
    created = write("new.md", 0.5)  # the write creates the file: no old_* at all
    put(store, full, created)
    assert store.pending("docs/ä.md") == [full._replace(seq=1)]
    assert store.pending("new.md") == [created._replace(seq=2)]
    (found,) = store.pending("new.md")
    assert (found.old_inode, found.old_mtime_ns, found.old_size, found.old_hash) == (None,) * 4


def test_a_paths_rows_come_in_commit_order_not_time_order(store: Store) -> None:
    put(store, write("a.md", 20.0, 1), write("a.md", 10.0, 2))
    put(store, write("a.md", 15.0, 3))
    assert [p.new_inode for p in store.pending("a.md")] == [1, 2, 3]


def test_a_path_is_matched_exactly(store: Store) -> None:
    put(store, write("a_md", 1.0), write("a.md.bak", 2.0), write("A.md", 3.0), write("a.md", 4.0))
    assert [p.path for p in store.pending("a.md")] == ["a.md"]
    assert store.pending("a%") == []
    assert store.pending_count("a.md") == (1, 4.0)


def test_the_count_is_every_row_of_the_path_and_its_least_time(store: Store) -> None:
    put(store, write("a.md", 30.0), write("b.md", 1.0), write("a.md", 10.0), write("a.md", 20.0))
    count, oldest = store.pending_count("a.md")
    assert (count, oldest) == (3, 10.0)  # the oldest was committed second, not first
    assert type(count) is int
    assert store.pending_count("none.md") == (0, None)


def test_pending_paths_lists_each_path_once_sorted_strictly_before_the_time(
    store: Store,
) -> None:
    put(store, write("z.md", 1.0), write("b.md", 2.0), write("z.md", 3.0), write("m.md", 5.0))
    assert store.pending_paths(before=5.0) == ["b.md", "z.md"]  # m.md's 5.0 is not before 5.0
    assert store.pending_paths(before=5.5) == ["b.md", "m.md", "z.md"]
    assert store.pending_paths(before=1.0) == []
    assert store.pending_paths(before=2.5) == ["b.md", "z.md"]  # z.md by its older row


def test_a_drop_takes_every_row_of_its_path_and_nothing_else(store: Store) -> None:
    put(store, write("a.md", 1.0), write("a.md.bak", 2.0), write("a.md", 3.0), write("b.md", 4.0))
    with store.writing():
        store.drop_pending("a.md")
        store.drop_pending("none.md")  # no rows: nothing happens
    assert [(path, at) for _, path, at in rows(store)] == [("a.md.bak", 2.0), ("b.md", 4.0)]
    assert store.pending_count("a.md") == (0, None)
