"""Reads in the etcd store: ``P/read/<reader>\\0<path>\\0<key>`` holds ``[rev, told]``; two
blocks telling one change cannot both commit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from memkeeper.records import FileState
from memkeeper.store.retry import StoreRetry
from tests.store.contract.conftest import row
from tests.store.etcd.conftest import etcd_only, key, stored

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_the_layout_of_a_read(store: EtcdStore) -> None:
    store.record_reads("claude-code:s1", "CLAUDE.md", {"build": 3})
    assert json.loads(stored(store)[key("read/claude-code:s1", "CLAUDE.md", "build")]) == [3, 3]


@etcd_only
def test_two_blocks_telling_one_change_cannot_both_commit(
    store: EtcdStore, other: EtcdStore
) -> None:
    with store.writing():
        store.put_file("CLAUDE.md", FileState(1, "sha256:" + "0" * 64))
        store.put_sections("CLAUDE.md", [row("build", 1, 2)])
        store.record_reads("a:1", "CLAUDE.md", {"build": 1})

    def tell_while_they_do() -> None:
        with store.writing():
            assert store.tell_read("a:1", "CLAUDE.md", "build", 2)
            assert other.tell_read("a:1", "CLAUDE.md", "build", 2)  # commits first

    with pytest.raises(StoreRetry):
        tell_while_they_do()
    assert store.stale_reads("a:1") == []
