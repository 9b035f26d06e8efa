"""The contract of proposals: opened with ids from 1, listed open-only unless asked, closed once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.store.contract.conftest import (
    TS,
)

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore


def test_proposals_open_and_close(store: StateStore) -> None:
    with store.writing():
        one = store.proposals.open_proposal("C.md", "build", 3, b"mine\n", "a", TS[0])
        two = store.proposals.open_proposal("C.md", "test", 1, b"\xff\n", "b", TS[1])
    assert (one.id, two.id, one.state) == (1, 2, "open")
    assert store.proposals.proposals() == [one, two]
    with store.writing():
        store.proposals.close_proposal(1, "applied", "a", TS[2], rev=4)
        store.proposals.close_proposal(1, "dropped", "b", TS[3])  # closed already
    applied = one._replace(state="applied", closed_by="a", closed_at=TS[2], rev=4)
    assert store.proposals.proposals() == [two]
    assert store.proposals.proposals(closed=True) == [applied, two]
    assert store.proposals.proposal(1) == applied
    assert store.proposals.proposal(2) == two
    assert store.proposals.proposal(3) is None
