"""When a watch asks which member whether it is alive (pure): its stream's member once quiet,
the others every second, a silent one seldom; an answer clears a member, and the silent are
tried last."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.store.etcd import liveness as lv
from memkeeper.store.etcd.liveness import ANSWER_S, OTHERS_S, SILENT_S, STREAM_S, Liveness


def settled(members: int, now: float) -> Liveness:
    """Every member asked and answering at ``now``."""
    live = Liveness.of(members)
    for i in range(members):
        live = lv.answered(lv.asked(live, i, now), i, now)
    return live


def test_at_first_every_member_is_due_the_streams_first() -> None:
    live = Liveness.of(3)
    assert lv.due(live, 2, 0.0) == 2
    assert lv.due(live, None, 0.0) == 0


def test_a_stream_that_sends_is_not_asked_a_quiet_one_is() -> None:
    live = settled(3, 0.0)
    assert lv.due(live, 1, STREAM_S / 2) is None
    live = lv.answered(live, 1, STREAM_S / 2)  # the stream sent something
    assert lv.due(live, 1, STREAM_S) is None
    assert lv.due(live, 1, STREAM_S * 1.5) == 1


def test_the_others_are_asked_every_second_the_silent_every_few() -> None:
    live = settled(3, 0.0)
    live = lv.unanswered(lv.asked(live, 2, 0.0), 2)
    live = lv.answered(live, 0, OTHERS_S)  # the stream keeps talking
    assert lv.due(live, 0, OTHERS_S) == 1
    live = lv.answered(lv.asked(live, 1, OTHERS_S), 1, OTHERS_S)
    live = lv.answered(live, 0, SILENT_S - 0.01)
    assert lv.due(live, 0, SILENT_S - 0.01) == 1  # the silent one is not due yet
    live = lv.answered(lv.asked(live, 1, SILENT_S - 0.01), 1, SILENT_S - 0.01)
    assert lv.due(live, 0, SILENT_S) == 2


def test_an_answer_clears_a_silent_member_and_the_silent_are_tried_last() -> None:
    live = lv.unanswered(lv.unanswered(Liveness.of(3), 0), 1)
    assert lv.ranked(live, [0, 1, 2]) == [2, 0, 1]
    live = lv.answered(live, 0, 1.0)
    assert lv.ranked(live, [0, 1, 2]) == [0, 2, 1]
    assert live.silent == frozenset({1})


@given(st.lists(st.floats(0.0, 0.05), min_size=1, max_size=200))
def test_a_silent_stream_member_is_asked_within_its_bound(steps: list[float]) -> None:
    """Whatever the ticks (up to 50 ms apart), a stream member that stopped sending is asked
    within ``STREAM_S`` and a tick: then the answer's wait decides (``ANSWER_S``)."""
    live, now, last = settled(3, 0.0), 0.0, 0.0
    for step in steps:
        now += step
        member = lv.due(live, 0, now)
        if member == 0:
            assert now - last <= STREAM_S + 0.05
            live = lv.answered(lv.asked(live, 0, now), 0, now)
            last = now
        elif member is not None:
            live = lv.answered(lv.asked(live, member, now), member, now)
    assert now - last < STREAM_S + 0.05 + ANSWER_S
