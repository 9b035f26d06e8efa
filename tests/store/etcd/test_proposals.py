"""Proposals in the etcd store: two blocks drawing the same id from ``P/seq/prop`` cannot both
commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.store.retry import StoreRetry
from tests.store.etcd.conftest import (
    TS,
    etcd_only,
)

if TYPE_CHECKING:
    from memkeeper.coordination import Proposal
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_two_blocks_drawing_the_same_proposal_id_cannot_both_commit(
    store: EtcdStore, other: EtcdStore
) -> None:
    theirs: list[Proposal] = []

    def open_while_they_do() -> None:
        with store.writing():
            mine = store.proposals.open_proposal("C.md", "build", 1, b"mine\n", "a", TS[0])
            theirs.append(
                other.proposals.open_proposal("C.md", "build", 1, b"theirs\n", "b", TS[0])
            )
            assert mine.id == theirs[0].id == 1

    with pytest.raises(StoreRetry):
        open_while_they_do()
    assert store.proposals.proposals() == theirs
