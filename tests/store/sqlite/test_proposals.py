"""The proposals table of a real SQLite store: proposals come back as stored (bytes as bytes),
in id order, and close only once. (What both backends share: tests/store/contract/.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.coordination import Proposal
from memkeeper.store.sqlite import Store

AT = "2026-11-29T13:27:07.120Z"
LATER = "2026-11-29T14:00:00.000Z"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(str(tmp_path / ".memkeeper"))
    yield opened
    opened.close()


def open_one(store: Store, body: bytes = b"mine\n", section: str = "build") -> Proposal:
    with store.writing():
        return store.proposals.open_proposal("CLAUDE.md", section, 3, body, "agent-a", AT)


def close(store: Store, proposal_id: int, state: str, rev: int | None = None) -> None:
    with store.writing():
        store.proposals.close_proposal(proposal_id, state, "agent-b", LATER, rev)


def test_an_opened_proposal_is_returned_as_stored(store: Store) -> None:
    opened = open_one(store, b"\xff not utf-8\n")
    expected = Proposal(
        1, "CLAUDE.md", "build", 3, b"\xff not utf-8\n", "agent-a", AT, "open", None, None, None
    )
    assert opened == expected
    found = store.proposals.proposal(1)
    assert found == expected
    assert found is not None
    assert type(found.body) is bytes


def test_proposals_come_in_id_order_open_ones_unless_asked(store: Store) -> None:
    first, second, third = (open_one(store, section=s) for s in ("build", "test", "lint"))
    assert [p.id for p in (first, second, third)] == [1, 2, 3]
    close(store, second.id, "dropped")
    assert [p.id for p in store.proposals.proposals()] == [1, 3]
    assert [(p.id, p.state) for p in store.proposals.proposals(closed=True)] == [
        (1, "open"),
        (2, "dropped"),
        (3, "open"),
    ]


def test_closing_records_state_who_when_and_the_landing_rev(store: Store) -> None:
    applied, dropped = open_one(store), open_one(store)
    close(store, applied.id, "applied", rev=4)
    close(store, dropped.id, "dropped")
    assert store.proposals.proposal(applied.id) == applied._replace(
        state="applied", closed_by="agent-b", closed_at=LATER, rev=4
    )
    assert store.proposals.proposal(dropped.id) == dropped._replace(
        state="dropped", closed_by="agent-b", closed_at=LATER, rev=None
    )


def test_a_closed_or_unknown_proposal_is_left_as_it_is(store: Store) -> None:
    proposal = open_one(store)
    close(store, proposal.id, "dropped")
    close(store, proposal.id, "applied", rev=9)
    close(store, 99, "applied", rev=9)
    assert store.proposals.proposal(proposal.id) == proposal._replace(
        state="dropped", closed_by="agent-b", closed_at=LATER
    )
    assert store.proposals.proposal(99) is None
    assert len(store.proposals.proposals(closed=True)) == 1
