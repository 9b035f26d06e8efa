"""The work queue at a glance (``work.board``), pure: the claimed items longest-held first with
their holder, claim and idle mark; the ready list in ``work next``'s order, an item after one
not done left out; the items blocked by a failed one, with why; the count of each state."""

from __future__ import annotations

from memkeeper.work.board import board
from memkeeper.work.items import Item

T0 = 1_700_000_000.0


def item(n: int, state: str = "open", **more: object) -> Item:
    return Item(id=n, rev=1, title=f"t{n}", state=state, created_by="a", created_at=T0 + n, **more)  # type: ignore[arg-type]


def test_who_works_on_what_and_what_is_ready() -> None:
    items = [
        item(1, "claimed", claim="c9", agent="w2", claimed_at=T0 + 50),
        item(2, "claimed", claim="c4", agent="w1", claimed_at=T0 + 10, paths=("src/",)),
        item(3),
        item(4, priority=3),
        item(5, after=(3,)),
        item(6, "failed"),
    ]
    mark = {"since": "2023-11-14T22:13:20Z", "idle_s": 1200.0, "event": 7}
    got = board(items, 11, {"c4": mark, "c9": None})
    assert [(w["id"], w["agent"], w["claim"], w["idle"]) for w in got["working"]] == [
        (2, "w1", "c4", mark),
        (1, "w2", "c9", None),
    ]
    assert got["working"][0]["since"] == "2023-11-14T22:13:30.000Z"
    assert got["working"][0]["paths"] == ["src/"]
    assert [(r["position"], r["id"]) for r in got["ready"]] == [(1, 4), (2, 3)]
    counts = {"open": 3, "claimed": 2, "ready": 2, "done": 11, "failed": 1, "blocked": 0}
    assert got["counts"] == counts
    assert got["blocked"] == []


def test_an_item_waiting_on_a_failed_one_is_listed_as_blocked() -> None:
    got = board([item(1, "failed", reason="red"), item(2, after=(1,)), item(3, after=(2,))], 0, {})
    assert [(b["id"], b["blocked"]) for b in got["blocked"]] == [
        (2, [{"id": 1, "reason": "red", "through": None}]),
        (3, [{"id": 1, "reason": "red", "through": 2}]),
    ]
    assert (got["counts"]["blocked"], got["ready"]) == (2, [])


def test_an_empty_queue() -> None:
    assert board([], 0, {}) == {
        "working": [],
        "ready": [],
        "blocked": [],
        "counts": {"open": 0, "claimed": 0, "ready": 0, "done": 0, "failed": 0, "blocked": 0},
    }
