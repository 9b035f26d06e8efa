"""The transitions of a meeting: each raises the revision by one, nothing leaves
``resolved``, a split's assignments lie within the contested targets and never overlap
(whatever is asked), a participant resolves only with what all accepted, anyone else with
anything, and an open meeting is due once its deadline has passed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.targets import covers, targets_overlap
from memkeeper.errors import Invalid
from memkeeper.meetings import rules
from memkeeper.meetings.records import Meeting, Plan

A, B, C = "claude-code:s1", "codex:t2", "human"
NOW = 1_700_000_000.0


def meeting(targets: tuple[str, ...] = ("CLAUDE.md",)) -> Meeting:
    return rules.opened(1, A, [B], targets, NOW, deadline_s=60)


def test_opening_needs_another_participant_targets_and_a_deadline() -> None:
    assert meeting().participants == (A, B)
    assert meeting().rev == 1
    with pytest.raises(Invalid, match="another participant"):
        rules.opened(1, A, [A], ["x"], NOW)
    with pytest.raises(Invalid, match="contested targets"):
        rules.opened(1, A, [B], [], NOW)
    with pytest.raises(Invalid, match="positive"):
        rules.opened(1, A, [B], ["x"], NOW, deadline_s=0)


def test_a_stale_rev_answers_with_the_meeting_as_it_is() -> None:
    m = rules.propose(meeting(), A, Plan("join"), NOW)
    with pytest.raises(rules.StaleMeeting) as caught:
        rules.check_rev(m, 1)
    assert caught.value.exit_code == 3
    assert caught.value.to_json()["current"]["rev"] == 2
    rules.check_rev(m, 2)


def test_a_participant_resolves_only_with_a_plan_all_accepted() -> None:
    m = rules.propose(meeting(), A, Plan("handoff", (), B), NOW)
    with pytest.raises(Invalid, match="not yet: " + B):
        rules.may_resolve(m, A, m.offers[0].plan, 1)
    with pytest.raises(Invalid, match="every participant accepted"):
        rules.may_resolve(m, A, Plan("join"), None)
    rules.may_resolve(m, A, Plan("escalate"), None)  # one side may always escalate
    rules.may_resolve(m, C, Plan("join"), None)  # a human decides anything
    agreed = rules.accept(m, B, 1)
    assert agreed.rev == 3
    assert rules.agreed(agreed, 1)
    rules.may_resolve(agreed, A, agreed.offers[0].plan, 1)
    assert rules.accept(agreed, B, 1) is agreed  # accepting twice changes nothing


def test_only_participants_propose_and_accept() -> None:
    with pytest.raises(Invalid, match="only a participant can propose"):
        rules.propose(meeting(), C, Plan("join"), NOW)
    with pytest.raises(Invalid, match="no proposal 4"):
        rules.accept(meeting(), B, 4)


def test_serialize_and_handoff_name_a_participant() -> None:
    with pytest.raises(Invalid, match="--first"):
        rules.plan("serialize", meeting(), who=C)
    assert rules.plan("handoff", meeting(), who=B) == Plan("handoff", (), B)
    with pytest.raises(Invalid, match="unknown resolution"):
        rules.plan("merge", meeting())


def test_a_split_refuses_parts_outside_or_shared() -> None:
    m = meeting(("CLAUDE.md", "src/api/"))
    good = rules.plan("split", m, assign={A: ["CLAUDE.md#a", "src/api/x.py"], B: ["CLAUDE.md#b"]})
    assert good.assigned(A) == ("CLAUDE.md#a", "src/api/x.py")
    with pytest.raises(Invalid, match="not within the contested"):
        rules.plan("split", m, assign={A: ["README.md"]})
    with pytest.raises(Invalid, match="overlaps what"):
        rules.plan("split", m, assign={A: ["src/api/"], B: ["src/api/x.py"]})
    with pytest.raises(Invalid, match="not in this meeting"):
        rules.plan("split", m, assign={C: ["CLAUDE.md#a"]})
    with pytest.raises(Invalid, match="assigns targets"):
        rules.plan("split", m, assign={A: []})


def test_a_meeting_is_due_once_open_past_its_deadline() -> None:
    m = meeting()
    assert not rules.due(m, NOW + 59.9)
    assert rules.due(m, NOW + 60)
    escalated = rules.escalated(m, ("@org/docs",))
    assert escalated.state == "escalated"
    assert not rules.due(escalated, NOW + 600)


SECTIONS = st.sampled_from(["a", "b", "c", "a/x", "a/y", "b/z"])
PATHS = st.sampled_from(["CLAUDE.md", "docs/", "docs/a.md", "docs/b.md", "src/x.py", "src/"])
TARGETS = st.one_of(PATHS, st.builds(lambda s: f"CLAUDE.md#{s}", SECTIONS))


@given(st.dictionaries(st.sampled_from([A, B, C]), st.lists(TARGETS, max_size=4), max_size=3))
def test_a_valid_split_partitions_part_of_the_contested_targets(
    assign: dict[str, list[str]],
) -> None:
    contested = ("CLAUDE.md", "docs/")
    m = rules.opened(1, A, [B, C], contested, NOW)
    try:
        p = rules.plan("split", m, assign=assign)
    except Invalid:
        return
    for agent, targets in p.assign:
        for target in targets:
            assert any(covers(c, target) for c in contested)
            for other, theirs in p.assign:
                if other != agent:
                    assert not any(targets_overlap(target, t) for t in theirs)


STEPS = st.lists(
    st.sampled_from(["propose", "accept", "escalate", "resolve", "stale"]), max_size=12
)


@given(STEPS)
def test_every_change_raises_rev_by_one_and_nothing_leaves_resolved(steps: list[str]) -> None:
    m = meeting()
    for step in steps:
        before = m
        try:
            if step == "propose":
                m = rules.propose(m, A, Plan("join"), NOW)
            elif step == "accept":
                m = rules.accept(m, B, len(m.offers))
            elif step == "escalate":
                m = rules.escalated(m, ())
            elif step == "resolve":
                m = rules.resolved(m, C, Plan("join"), NOW)
            else:
                rules.check_rev(m, m.rev - 1)
        except (Invalid, rules.StaleMeeting):
            assert before.state == "resolved" or step in ("accept", "stale")
            continue
        assert before.state != "resolved"
        assert m.rev in (before.rev, before.rev + 1)
        assert m.rev == before.rev + 1 or m is before
