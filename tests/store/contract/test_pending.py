"""The contract of pending writes: put, counted, listed by path and time, dropped, and dropped then
put again in one block."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.store.contract.conftest import (
    pending_write,
)

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore


def test_pending_put_count_paths_drop(store: StateStore) -> None:
    with store.writing():
        store.put_pending(pending_write("a.md", 10.0, 1))
        store.put_pending(pending_write("b.md", 30.0, 2))
        store.put_pending(pending_write("a.md", 20.0, 3))
    found = store.pending("a.md")
    assert [(p.path, p.new_inode, p.at) for p in found] == [("a.md", 1, 10.0), ("a.md", 3, 20.0)]
    assert found[0].seq < found[1].seq
    assert found[0] == pending_write("a.md", 10.0, 1)._replace(seq=found[0].seq)
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
        store.put_pending(pending_write("b.md", 40.0, 4))
        store.put_pending(pending_write("b.md", 41.0, 5))
    assert [p.new_inode for p in store.pending("b.md")] == [4, 5]
