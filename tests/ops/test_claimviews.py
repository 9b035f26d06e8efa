"""What the claim table shows: the last hour's metrics; a root without a store has an empty
table and gets none."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import Conflict, Memory
from tests.ops.conftest import START

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock


def test_metrics_count_the_last_hour(
    agents: Callable[[str], Memory], clock: FakeClock, sample: Path
) -> None:
    a, b = agents("a"), agents("b")
    a.claim("x", ttl=10)
    a.claim("y", ttl=100)
    a.patch("CLAUDE.md#build", "one\n", expect_rev=1)
    with pytest.raises(Conflict):
        b.patch("CLAUDE.md#build", "two\n", expect_rev=1)
    clock.advance(10)
    expected: dict[str, Any] = {
        "window_s": 3600,
        "claims_held": 1,
        "queue_depth": 0,
        "claims_granted": 2,
        "deadlocks_broken": 0,
        "ttl_expirations": 1,
        "conflicts": 1,
    }
    assert b.metrics() == expected
    assert not any(e.type == "conflict" for e in a.events()), "kept out of the event log"
    clock.advance(3601)  # y expires now; everything else happened over an hour ago
    later = {"claims_held": 0, "claims_granted": 0, "ttl_expirations": 1, "conflicts": 0}
    assert b.metrics() == expected | later


def test_a_root_without_a_store_shows_an_empty_table_and_gets_none(sample: Path) -> None:
    from memkeeper.ops import claimviews
    from memkeeper.ops.workspace import Workspace

    ws = Workspace(sample, "a")
    try:
        claims, waiters, now = claimviews.live(ws)
        assert (claims, waiters, now > 0) == ([], [], True)
        counts = claimviews.metrics(ws)
    finally:
        ws.close()
    assert counts.pop("window_s") == 3600
    assert set(counts.values()) == {0}
    assert len(counts) == 6
    assert not (sample / ".memkeeper").exists()


def test_with_a_store_it_shows_the_tables_live_claims_and_queue(
    agents: Callable[[str], Memory],
) -> None:
    from memkeeper.ops import claimviews

    a = agents("a")
    held = a.claim("src/", ttl=60)
    claims, waiters, now = claimviews.live(a.workspace)
    assert ([c.id for c in claims], waiters, now) == ([held.id], [], START)
    assert claimviews.metrics(a.workspace)["claims_held"] == 1
