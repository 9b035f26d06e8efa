"""A ``serialize`` resolution's turns (``meetings.turns``): whatever the participants and a
third agent do in between, never two holders of the contested targets at once, the turns go
in the meeting's order, and every participant has its turn or is skipped with a reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Claim
from memkeeper.errors import Invalid
from memkeeper.meetings import rules, turns
from memkeeper.meetings.records import Meeting, Plan

NOW = 1_700_000_000.0
PEOPLE = ("a", "b", "c", "d")
THIRD = "third"


def claim(id: str, agent: str, targets: tuple[str, ...]) -> Claim:
    return Claim(id, int(id[1:]), agent, "write", targets, 0, True, NOW, NOW + 60, "")


def serializing(n: int, standing: dict[str, list[str]]) -> Meeting:
    people = PEOPLE[:n]
    m = rules.opened(1, people[0], people[1:], ["docs/"], NOW)
    return rules.resolved(m, "human", Plan("serialize", who=people[0]), NOW, (), standing)


def test_a_serialize_keeps_the_order_and_each_waiting_ones_claims() -> None:
    m = serializing(3, {"b": ["c7"]})
    assert (m.state, m.order, m.turn) == ("serializing", ("a", "b", "c"), 0)
    assert (m.standing_of("b"), m.standing_of("c")) == (("c7",), ())
    assert rules.resolved(rules.opened(1, "a", ["b"], ["x"], NOW), "h", Plan("join"), NOW).state \
        == "resolved"  # fmt: skip


def test_no_turn_while_the_holder_holds_any_contested_target() -> None:
    m = serializing(2, {})
    assert turns.next_turn(m, [claim("c1", "a", ("docs/a.md",))], NOW) is None
    turn = turns.next_turn(m, [claim("c1", "a", ("src/",))], NOW)  # narrowed away from docs/
    assert turn is not None
    assert turn.to == "b"
    assert (turn.meeting.state, turn.meeting.turn, turn.meeting.rev) == ("resolved", 1, m.rev + 1)


def test_another_agents_claim_holds_the_turn_back() -> None:
    m = serializing(2, {})
    assert turns.next_turn(m, [claim("c9", THIRD, ("docs/x.md",))], NOW) is None
    assert turns.next_turn(m, [claim("c9", THIRD, ("src/",))], NOW) is not None


def test_one_whose_claims_all_ended_is_skipped_and_the_last_skip_resolves() -> None:
    m = serializing(3, {"b": ["c5"], "c": ["c6"]})
    turn = turns.next_turn(m, [claim("c6", "c", ("notes/",))], NOW)
    assert turn is not None
    assert (turn.to, turn.skipped[0][0]) == ("c", "b")
    assert "left" in turn.skipped[0][1]
    gone = turns.next_turn(m, [], NOW)
    assert gone is not None
    assert gone.to is None
    assert [a for a, _ in gone.skipped] == ["b", "c"]
    assert gone.meeting.state == "resolved"


# one step of the world: the holder lets go, a waiting participant leaves (its own claim
# ends), or a third agent claims a contested target (when it may) or lets it go
Step = st.sampled_from(["release", "leave", "third-claims", "third-releases"])


@given(n=st.integers(2, 4), leaving=st.sets(st.sampled_from(PEOPLE[1:])), steps=st.lists(
    st.tuples(Step, st.sampled_from(PEOPLE)), max_size=30))  # fmt: skip
def test_one_holder_at_a_time_in_order_each_has_its_turn_or_is_skipped(
    n: int, leaving: set[str], steps: list[tuple[str, str]]
) -> None:
    people = PEOPLE[:n]
    # each waiting participant that may leave keeps a claim of its own elsewhere
    standing = {p: [f"c{10 + i}"] for i, p in enumerate(people) if p in leaving}
    live = [claim(f"c{10 + i}", p, ("elsewhere/" + p,)) for i, p in enumerate(people)
            if p in leaving]  # fmt: skip
    live.append(claim("c1", people[0], ("docs/",)))
    m, tokens, had = serializing(n, standing), iter(range(100, 10_000)), [people[0]]

    def settle() -> None:
        nonlocal m
        while (turn := turns.next_turn(m, live, NOW)) is not None:
            assert turn.meeting.rev == m.rev + 1
            m = turn.meeting
            if turn.to is not None:
                assert turn.to not in [a for a, _ in turn.skipped]
                live.append(claim(f"c{next(tokens)}", turn.to, ("docs/",)))
                had.append(turn.to)
            holders = {c.agent for c in live if turns.holds(m, c.agent, [c])}
            assert len(holders) <= 1  # never two holders

    for what, who in [*steps, *[("third-releases", ""), ("release", "")] * (n + 1)]:
        if what == "release":
            live[:] = [c for c in live if c.agent not in m.order[m.turn : m.turn + 1]
                       or not turns.holds(m, c.agent, [c])]  # fmt: skip
        elif what == "leave" and who in standing:
            live[:] = [c for c in live if c.id not in standing[who]]
        elif what == "third-claims" and not turns.in_way(m, THIRD, live):
            live.append(claim(f"c{next(tokens)}", THIRD, ("docs/x.md",)))
        elif what == "third-releases":
            live[:] = [c for c in live if c.agent != THIRD]
        settle()
    assert m.state == "resolved"
    skipped = [a for a, _ in m.skipped]
    assert had == [p for p in people if p not in skipped]  # the order kept
    assert sorted(had + skipped) == sorted(people)  # each had its turn or was skipped
    assert all(why for _, why in m.skipped)


def test_a_serializing_meeting_takes_no_proposal_acceptance_or_resolution() -> None:
    m = serializing(2, {})
    with pytest.raises(Invalid, match="serializing"):
        rules.propose(m, "a", Plan("join"), NOW)
    with pytest.raises(Invalid, match="serializing"):
        rules.may_resolve(m, "human", Plan("join"), None)
    with pytest.raises(Invalid, match="serializing"):
        rules.escalated(m, ())
    assert not rules.due(m, m.deadline + 1)
