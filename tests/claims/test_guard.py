"""The claims guard of commits and pushes: which other identities' live claims a commit's
changed paths fall under, strict (refused) or advisory (warned), and what is said."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Claim, Mode
from memkeeper.claims.guard import Change, as_json, judge, own, todo, touched, warning, what

NOW = 1_700_000_000.0


def held(
    id: str,
    agent: str,
    *targets: str,
    strict: bool = False,
    mode: Mode = "write",
    expires_at: float = NOW + 60,
) -> Claim:
    return Claim(id, 1, agent, mode, targets, 0, strict, NOW - 10, expires_at, "tidy the docs")


def test_another_identitys_strict_claim_over_a_changed_path_blocks() -> None:
    claim = held("c1", "codex:T1", "docs/", strict=True)
    [hit] = judge([Change("docs/a.md"), Change("src/x.py")], [claim], "claude-code:S1", NOW)
    assert (hit.claim, hit.paths, hit.blocks) == (claim, ("docs/a.md",), True)


def test_an_advisory_claim_only_warns_and_a_read_claim_counts_too() -> None:
    claims = [held("c1", "codex:T1", "docs/"), held("c2", "human", "src/", mode="read")]
    hits = judge([Change("docs/a.md"), Change("src/x.py")], claims, "claude-code:S1", NOW)
    assert [(h.claim.id, h.blocks) for h in hits] == [("c1", False), ("c2", False)]


def test_the_committers_own_claims_and_its_sub_agents_never_count() -> None:
    claims = [
        held("c1", "claude-code:S1", "docs/", strict=True),
        held("c2", "claude-code:S1/helper", "docs/", strict=True),
        held("c3", "claude-code:S12", "docs/", strict=True),
    ]
    hits = judge([Change("docs/a.md")], claims, "claude-code:S1", NOW)
    assert [h.claim.id for h in hits] == ["c3"]  # another session whose id starts the same


def test_an_expired_claim_counts_no_more() -> None:
    claim = held("c1", "codex:T1", "docs/", strict=True, expires_at=NOW)
    assert judge([Change("docs/a.md")], [claim], "human", NOW) == []


def test_the_policys_strict_file_makes_an_advisory_claim_block() -> None:
    claim = held("c1", "codex:T1", "CLAUDE.md")
    [hit] = judge([Change("CLAUDE.md", strict=True)], [claim], "human", NOW)
    assert hit.blocks


def test_a_section_claim_blocks_only_a_change_that_touches_its_section() -> None:
    claim = held("c1", "codex:T1", "CLAUDE.md#project/build", strict=True)
    other = Change("CLAUDE.md", frozenset({"project/testing"}))
    nested = Change("CLAUDE.md", frozenset({"project/build/linux"}))
    unknown = Change("CLAUDE.md", None)
    assert judge([other], [claim], "human", NOW) == []
    assert [h.paths for h in judge([nested], [claim], "human", NOW)] == [("CLAUDE.md",)]
    assert [h.paths for h in judge([unknown], [claim], "human", NOW)] == [("CLAUDE.md",)]


def test_what_is_said_names_the_holder_the_claim_its_targets_until_when_and_the_commands() -> None:
    claim = held("c7", "codex:T1", "docs/", "memory/*.md", strict=True)
    [hit] = judge([Change("docs/a.md"), Change("memory/b.md")], [claim], "human", NOW)
    said = what(hit, NOW, "this commit changes")
    assert said == (
        "this commit changes docs/a.md, memory/b.md, under codex:T1's strict write claim c7 "
        "on docs/, memory/*.md until 2023-11-14T22:14:20.000Z (60 s left): 'tidy the docs'"
    )
    assert todo(hit, NOW) == (
        "wait for it: memkeeper claim docs/ memory/*.md --wait 60; or ask its holder: "
        "memkeeper request-release c7"
    )
    assert "advisory, so it goes ahead" in warning(hit, NOW, "the push carries changes to")
    assert as_json(hit, NOW)["holder"] == "codex:T1"


def test_many_paths_are_shortened() -> None:
    claim = held("c1", "codex:T1", "docs/")
    [hit] = judge([Change(f"docs/{n}.md") for n in range(8)], [claim], "human", NOW)
    assert "docs/4.md and 3 more, under" in what(hit, NOW, "this commit changes")


# -- properties ---------------------------------------------------------------------------

names = st.sampled_from(["a.md", "docs/b.md", "docs/c/d.md", "src/e.py", "CLAUDE.md"])
targets = st.sampled_from(["a.md", "docs/", "docs/*.md", "**/*.md", "src", "CLAUDE.md#x"])
agents = st.sampled_from(["human", "codex:T1", "claude-code:S1", "claude-code:S1/sub"])


@st.composite
def claims(draw: st.DrawFn) -> list[Claim]:
    count = draw(st.integers(0, 4))
    return [
        held(
            f"c{n}",
            draw(agents),
            *draw(st.lists(targets, min_size=1, max_size=3, unique=True)),
            strict=draw(st.booleans()),
            expires_at=NOW + draw(st.sampled_from([-1, 0, 30])),
        )
        for n in range(count)
    ]


changes = st.lists(st.builds(Change, names, st.none(), st.booleans()), max_size=5)


@given(changes, claims(), agents)
def test_a_hit_is_exactly_a_live_claim_of_another_over_some_change(
    found: list[Change], held_claims: list[Claim], actor: str
) -> None:
    hits = {h.claim.id: h for h in judge(found, held_claims, actor, NOW)}
    for claim in held_claims:
        reached = [c for c in found if any(touched(t, c) for t in claim.targets)]
        expected = claim.is_live(NOW) and not own(claim.agent, actor) and bool(reached)
        assert (claim.id in hits) == expected
        if expected:
            hit = hits[claim.id]
            assert set(hit.paths) == {c.path for c in reached}
            assert hit.blocks == (claim.strict or any(c.strict for c in reached))


@given(changes, claims(), agents)
def test_nothing_blocks_a_commit_that_only_its_own_claims_cover(
    found: list[Change], held_claims: list[Claim], actor: str
) -> None:
    mine = [held(c.id, actor, *c.targets, strict=True) for c in held_claims]
    assert judge(found, mine, actor, NOW) == []
