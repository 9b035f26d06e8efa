"""The one rule both stores keep bodies by: a prune is due once a section's rev is
``KEEP_BODIES`` past a multiple of ``PRUNE_EVERY``, and takes the bodies up to that cut — so
between ``KEEP_BODIES`` and ``KEEP_BODIES + PRUNE_EVERY - 1`` stay. (Each store's pruning:
tests/store/sqlite/test_files.py and tests/store/contract/test_files.py.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.store import bodies
from memkeeper.store.bodies import KEEP_BODIES, PRUNE_EVERY, prune_cut

if TYPE_CHECKING:
    import pytest


def test_no_prune_is_due_before_a_section_has_more_than_it_keeps() -> None:
    assert [rev for rev in range(1, KEEP_BODIES + 1) if prune_cut(rev) is not None] == []


def test_a_prune_is_due_every_prune_every_revs_and_cuts_keep_bodies_behind() -> None:
    due = [rev for rev in range(1, KEEP_BODIES + 4 * PRUNE_EVERY + 1) if prune_cut(rev)]
    assert due == [KEEP_BODIES + n * PRUNE_EVERY for n in range(1, 5)]
    assert [prune_cut(rev) for rev in due] == [n * PRUNE_EVERY for n in range(1, 5)]


def test_what_stays_lies_within_the_bounds() -> None:
    first_kept, counts = 1, []
    for rev in range(1, KEEP_BODIES + 5 * PRUNE_EVERY):
        cut = prune_cut(rev)
        if cut is not None:
            first_kept = cut + 1
        counts.append(rev - first_kept + 1)
    steady = counts[KEEP_BODIES:]
    assert (min(steady), max(steady)) == (KEEP_BODIES, KEEP_BODIES + PRUNE_EVERY - 1)


def test_the_constants_are_read_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bodies, "KEEP_BODIES", 2)
    monkeypatch.setattr(bodies, "PRUNE_EVERY", 1)
    assert [prune_cut(rev) for rev in (1, 2, 3, 4)] == [None, None, 1, 2]
