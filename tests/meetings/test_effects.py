"""What a resolution does to the claims in contention: a split leaves each participant its
assignment, a handoff or serialize gives everything to one, a join keeps the holder's claim
and shares it, escalate changes nothing; claims are narrowed, released when left empty,
granted where a participant held none; a target wider than the contested ones is refused."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Claim
from memkeeper.claims.targets import targets_overlap
from memkeeper.errors import Invalid
from memkeeper.meetings import rules
from memkeeper.meetings.effects import Effects, Grant, Narrow, effects
from memkeeper.meetings.records import Plan

A, B, C = "claude-code:s1", "codex:t2", "someone-else"
NOW = 1_700_000_000.0


def claim(id: str, agent: str, *targets: str, token: int = 1, strict: bool = True) -> Claim:
    return Claim(id, token, agent, "write", targets, 0, strict, NOW, NOW + 60, "")


M = rules.opened(1, B, [A], ["CLAUDE.md"], NOW)
HOLD = claim("c1", A, "CLAUDE.md", "src/x.py")


def test_a_split_narrows_the_holder_and_grants_the_other_its_part() -> None:
    p = rules.plan("split", M, assign={A: ["CLAUDE.md#build"], B: ["CLAUDE.md#test"]})
    assert effects(M, p, [HOLD, claim("c9", C, "other.md", token=3)]) == Effects(
        (Narrow("c1", ("src/x.py", "CLAUDE.md#build")),),
        (Grant(B, ("CLAUDE.md#test",), True),),
    )


def test_a_claim_given_nothing_is_released_and_one_keeping_all_is_untouched() -> None:
    p = rules.plan("split", M, assign={B: ["CLAUDE.md#test"]})
    fx = effects(M, p, [claim("c1", A, "CLAUDE.md")])
    assert fx.narrow == (Narrow("c1", ()),)
    assert effects(M, Plan("handoff", (), A), [HOLD]) == Effects()


def test_handoff_and_serialize_give_everything_to_the_one_named() -> None:
    for kind in ("handoff", "serialize"):
        fx = effects(M, Plan(kind, (), B), [HOLD])
        assert fx == Effects((Narrow("c1", ("src/x.py",)),), (Grant(B, ("CLAUDE.md",), True),))


def test_join_shares_the_holders_claim_and_needs_one() -> None:
    assert effects(M, Plan("join"), [HOLD]) == Effects(joint=("c1",))
    with pytest.raises(Invalid, match="join shares a claim"):
        effects(M, Plan("join"), [])


def test_escalate_changes_nothing() -> None:
    assert effects(M, Plan("escalate"), [HOLD]) == Effects()


def test_a_target_wider_than_the_contested_ones_is_refused() -> None:
    m = rules.opened(1, B, [A], ["docs/a.md"], NOW)
    with pytest.raises(Invalid, match="wider than the contested"):
        effects(m, Plan("handoff", (), B), [claim("c1", A, "docs/")])


SECTIONS = st.sampled_from(["CLAUDE.md#a", "CLAUDE.md#b", "CLAUDE.md#c", "docs/x.md", "docs/y/"])
OUTSIDE = st.sampled_from(["src/", "notes.md", "AGENTS.md#z"])


def applied(claims: list[Claim], fx: Effects) -> list[Claim]:
    """The claims as the shell leaves them: narrowed, released when empty, granted."""
    after = {n.claim_id: n.targets for n in fx.narrow}
    out = [replace(c, targets=after.get(c.id, c.targets)) for c in claims]
    out = [c for c in out if c.targets]
    return out + [
        claim(f"g{i}", g.agent, *g.targets, token=100 + i) for i, g in enumerate(fx.grant)
    ]


@given(
    st.dictionaries(st.sampled_from([A, B]), st.lists(SECTIONS, max_size=3, unique=True)),
    st.lists(OUTSIDE, max_size=2, unique=True),
    st.sampled_from(["CLAUDE.md", "docs/"]),
)
def test_after_a_split_each_participant_holds_exactly_its_assignment(
    assign: dict[str, list[str]], kept: list[str], held_by_a: str
) -> None:
    m = rules.opened(1, B, [A], ["CLAUDE.md", "docs/"], NOW)
    try:
        p = rules.plan("split", m, assign=assign)
    except Invalid:
        return
    before = [claim("c1", A, held_by_a, *kept), claim("c9", C, "elsewhere.md", token=9)]
    after = applied(before, effects(m, p, before))
    for agent in (A, B):
        mine = {t for c in after if c.agent == agent for t in c.targets}
        contested = {t for t in mine if any(targets_overlap(t, u) for u in m.targets)}
        assert contested == set(p.assigned(agent))
    assert {t for c in after if c.agent == A for t in c.targets} >= set(kept)  # the rest stays
    assert [c for c in after if c.agent == C] == [before[1]]  # outsiders untouched
    for x in after:
        for y in after:
            if x.agent != y.agent:
                assert not any(targets_overlap(s, t) for s in x.targets for t in y.targets)
