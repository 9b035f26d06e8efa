"""The bodies and proposals tables of a real SQLite store, statement by statement: a body is
kept once per rev (the first one stays) and only for present rows; pruning runs every
``PRUNE_EVERY`` revs for the section it is due for and nothing else, so a section always has
between ``KEEP_BODIES`` and ``KEEP_BODIES + PRUNE_EVERY - 1`` bodies; proposals come back as
stored (bytes as bytes), in id order, and close only once. (What both backends share:
tests/store/test_store_contract.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper import events as ev
from memkeeper.coordination import Proposal
from memkeeper.records import SectionRow
from memkeeper.store.proposaltables import KEEP_BODIES, PRUNE_EVERY
from memkeeper.store.sqlite import Store

AT = "2026-11-29T13:27:07.120Z"
LATER = "2026-11-29T14:00:00.000Z"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(str(tmp_path / ".memkeeper"))
    yield opened
    opened.close()


def row(key: str, rev: int, body: bytes = b"text\n", *, present: bool = True) -> SectionRow:
    heading = f"# {key}\n".encode()
    hash_ = ev.digest(heading + body) if present else None
    return SectionRow(key, 0, rev, hash_, present, key, 1, key, heading, body, 2)


def keep(store: Store, path: str, *rows: SectionRow) -> None:
    with store.writing():
        store.keep_bodies(path, rows)


def kept_revs(store: Store, path: str, key: str) -> list[int]:
    sql = "SELECT rev FROM bodies WHERE path = ? AND key = ? ORDER BY rev"
    return [rev for (rev,) in store._db.execute(sql, (path, key)).fetchall()]


def body_count(store: Store) -> int:
    return int(store._db.execute("SELECT COUNT(*) FROM bodies").fetchone()[0])


# -- bodies -----------------------------------------------------------------------------------


def test_a_body_comes_back_as_bytes_at_its_rev_only(store: Store) -> None:
    keep(store, "a.md", row("log", 3, b"\xff\x00three\n"))
    found = store.body_at("a.md", "log", 3)
    assert found == b"\xff\x00three\n"
    assert type(found) is bytes
    assert store.body_at("a.md", "log", 2) is None
    assert store.body_at("a.md", "other", 3) is None
    assert store.body_at("b.md", "log", 3) is None


def test_the_first_body_kept_at_a_rev_stays(store: Store) -> None:
    keep(store, "a.md", row("log", 3, b"first\n"))
    keep(store, "a.md", row("log", 3, b"second\n"))
    assert store.body_at("a.md", "log", 3) == b"first\n"
    assert body_count(store) == 1


def test_absent_rows_keep_no_body(store: Store) -> None:
    keep(store, "a.md", row("gone", 4, b"", present=False))
    keep(store, "a.md")  # no rows at all
    assert body_count(store) == 0
    keep(store, "a.md", row("gone", 5, b"", present=False), row("here", 5, b"here\n"))
    assert [kept_revs(store, "a.md", k) for k in ("gone", "here")] == [[], [5]]


def test_a_due_prune_forgets_only_its_own_sections_old_bodies(store: Store) -> None:
    with store.writing():
        for rev in range(1, PRUNE_EVERY + 5):
            store.keep_bodies("a.md", [row("log", rev), row("notes", rev)])
            store.keep_bodies("b.md", [row("log", rev)])
    due = KEEP_BODIES + PRUNE_EVERY  # its cut, rev - KEEP_BODIES, is a multiple of PRUNE_EVERY
    keep(store, "a.md", row("log", due))
    assert kept_revs(store, "a.md", "log") == [*range(PRUNE_EVERY + 1, PRUNE_EVERY + 5), due]
    assert kept_revs(store, "a.md", "notes") == list(range(1, PRUNE_EVERY + 5))
    assert kept_revs(store, "b.md", "log") == list(range(1, PRUNE_EVERY + 5))


def test_a_rev_not_due_prunes_nothing(store: Store) -> None:
    keep(store, "a.md", row("log", 1), row("log", 2), row("log", 3))
    late = KEEP_BODIES + PRUNE_EVERY + 1  # its cut is one past a multiple of PRUNE_EVERY
    keep(store, "a.md", row("log", late))
    keep(store, "a.md", row("log", KEEP_BODIES + 3))  # cut 3: not due either
    assert kept_revs(store, "a.md", "log") == [1, 2, 3, KEEP_BODIES + 3, late]


def test_a_section_written_rev_after_rev_keeps_its_last_bodies_within_the_bounds(
    store: Store,
) -> None:
    counts = []
    with store.writing():
        for rev in range(1, KEEP_BODIES + 3 * PRUNE_EVERY + 1):
            store.keep_bodies("a.md", [row("log", rev)])
            revs = kept_revs(store, "a.md", "log")
            assert revs == list(range(revs[0], rev + 1))  # the newest, without a gap
            counts.append(len(revs))
    assert counts[: KEEP_BODIES + 1] == list(range(1, KEEP_BODIES + 2))  # nothing pruned yet
    steady = counts[KEEP_BODIES:]
    assert min(steady) == KEEP_BODIES
    assert max(steady) == KEEP_BODIES + PRUNE_EVERY - 1


# -- proposals --------------------------------------------------------------------------------


def open_one(store: Store, body: bytes = b"mine\n", section: str = "build") -> Proposal:
    with store.writing():
        return store.open_proposal("CLAUDE.md", section, 3, body, "agent-a", AT)


def close(store: Store, proposal_id: int, state: str, rev: int | None = None) -> None:
    with store.writing():
        store.close_proposal(proposal_id, state, "agent-b", LATER, rev)


def test_an_opened_proposal_is_returned_as_stored(store: Store) -> None:
    opened = open_one(store, b"\xff not utf-8\n")
    expected = Proposal(
        1, "CLAUDE.md", "build", 3, b"\xff not utf-8\n", "agent-a", AT, "open", None, None, None
    )
    assert opened == expected
    found = store.proposal(1)
    assert found == expected
    assert found is not None
    assert type(found.body) is bytes


def test_proposals_come_in_id_order_open_ones_unless_asked(store: Store) -> None:
    first, second, third = (open_one(store, section=s) for s in ("build", "test", "lint"))
    assert [p.id for p in (first, second, third)] == [1, 2, 3]
    close(store, second.id, "dropped")
    assert [p.id for p in store.proposals()] == [1, 3]
    assert [(p.id, p.state) for p in store.proposals(closed=True)] == [
        (1, "open"),
        (2, "dropped"),
        (3, "open"),
    ]


def test_closing_records_state_who_when_and_the_landing_rev(store: Store) -> None:
    applied, dropped = open_one(store), open_one(store)
    close(store, applied.id, "applied", rev=4)
    close(store, dropped.id, "dropped")
    assert store.proposal(applied.id) == applied._replace(
        state="applied", closed_by="agent-b", closed_at=LATER, rev=4
    )
    assert store.proposal(dropped.id) == dropped._replace(
        state="dropped", closed_by="agent-b", closed_at=LATER, rev=None
    )


def test_a_closed_or_unknown_proposal_is_left_as_it_is(store: Store) -> None:
    proposal = open_one(store)
    close(store, proposal.id, "dropped")
    close(store, proposal.id, "applied", rev=9)
    close(store, 99, "applied", rev=9)
    assert store.proposal(proposal.id) == proposal._replace(
        state="dropped", closed_by="agent-b", closed_at=LATER
    )
    assert store.proposal(99) is None
    assert len(store.proposals(closed=True)) == 1
