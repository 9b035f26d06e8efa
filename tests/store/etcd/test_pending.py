"""Pending writes in the etcd store: a seq is never handed out again after a drop (it comes
from a counter, not a rowid); a drop meanwhile fails a block that listed them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.store.retry import StoreRetry
from tests.store.etcd.conftest import (
    etcd_only,
    pending,
)

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_a_pending_seq_is_never_handed_out_again_after_a_drop(store: EtcdStore) -> None:
    store.put_pending(pending("a.md", 1.0, 1))
    store.put_pending(pending("a.md", 2.0, 2))
    store.drop_pending("a.md")
    store.put_pending(pending("a.md", 3.0, 3))
    assert [(p.seq, p.new_inode) for p in store.pending("a.md")] == [(3, 3)]


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
