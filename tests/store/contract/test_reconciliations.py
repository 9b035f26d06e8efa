"""The contract of reconciliations: opened, refreshed rather than duplicated, resolved once, listed
open-only unless asked, a resolved region opening a new one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.store.contract.conftest import (
    TS,
)

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore


def test_reconciliations_open_refresh_resolve(store: StateStore) -> None:
    with store.writing():
        first, opened = store.reconciliations.open_reconciliation(
            "s.md", "claims", "h1", "g1", "a", TS[0]
        )
    assert opened
    assert (first.id, first.human, first.resolution) == (1, "h1", None)
    with store.writing():
        again, opened = store.reconciliations.open_reconciliation(
            "s.md", "claims", "h2", "g2", "b", TS[1]
        )
        other, _ = store.reconciliations.open_reconciliation("t.md", "events", "h", "g", "b", TS[1])
    assert not opened
    assert again == first._replace(human="h2", generated="g2")
    assert other.id == 2
    assert store.reconciliations.reconciliations() == [again, other]
    assert store.reconciliations.reconciliations(path="t.md") == [other]
    assert store.reconciliations.reconciliation(1) == again
    assert store.reconciliations.reconciliation(99) is None
    with store.writing():
        store.reconciliations.resolve_reconciliation(1, "keep-human", "c", TS[2])
        store.reconciliations.resolve_reconciliation(
            1, "take-generated", "d", TS[3]
        )  # already resolved
    assert store.reconciliations.reconciliations() == [other]
    resolved = again._replace(resolution="keep-human", resolved_by="c", resolved_at=TS[2])
    assert store.reconciliations.reconciliations(resolved=True) == [resolved, other]
    with store.writing():
        reopened, opened = store.reconciliations.open_reconciliation(
            "s.md", "claims", "h3", "g3", "a", TS[4]
        )
    assert opened
    assert reopened.id == 3
