"""Reconciliations in the etcd store: ``P/reco/<path>\\0<region>`` names the open one of a
region — refreshed in place, gone once it is resolved, a new id the next time — and a block
that opened one loses to another that opened one for the same region meanwhile."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from memkeeper.store.retry import StoreRetry
from tests.store.etcd.conftest import TS, etcd_only, key, n20, stored

if TYPE_CHECKING:
    from memkeeper.coordination import Reconciliation
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_the_open_key_names_the_open_one_until_it_is_resolved(store: EtcdStore) -> None:
    first, opened = store.reconciliations.open_reconciliation(
        "s.md", "claims", "h1", "g1", "a", TS[0]
    )
    assert opened
    again, opened = store.reconciliations.open_reconciliation(
        "s.md", "claims", "h2", "g2", "b", TS[1]
    )
    assert (opened, again.id) == (False, first.id)
    assert stored(store)[key("reco/s.md", "claims")] == b"1"
    assert json.loads(stored(store)[key("rec/" + n20(1))])[3:5] == ["h2", "g2"]
    store.reconciliations.resolve_reconciliation(first.id, "keep-human", "c", TS[2])
    assert key("reco/s.md", "claims") not in stored(store)
    reopened, opened = store.reconciliations.open_reconciliation(
        "s.md", "claims", "h3", "g3", "a", TS[3]
    )
    assert (opened, reopened.id) == (True, 2)
    assert stored(store)[key("reco/s.md", "claims")] == b"2"


@etcd_only
def test_two_blocks_opening_one_for_the_same_region_cannot_both_commit(
    store: EtcdStore, other: EtcdStore
) -> None:
    theirs: list[Reconciliation] = []

    def open_while_they_do() -> None:
        with store.writing():
            store.reconciliations.open_reconciliation("s.md", "claims", "mine", "g", "a", TS[0])
            theirs.append(
                other.reconciliations.open_reconciliation(
                    "s.md", "claims", "theirs", "g", "b", TS[0]
                )[0]
            )

    with pytest.raises(StoreRetry):
        open_while_they_do()
    assert store.reconciliations.reconciliations() == theirs
