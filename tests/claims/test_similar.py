"""The pure rules of claims compared by meaning: the score is a symmetric cosine, a higher
threshold never adds a warning, only other agents' claims with an objective are compared, and
a warning names the claim, its holder, its objective and the score."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Claim
from memkeeper.claims.similar import (
    Match,
    comparable,
    match_json,
    overlap_warning,
    overlaps,
    ranked,
    score,
)

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
vectors = st.integers(min_value=1, max_value=8).flatmap(
    lambda n: st.tuples(
        st.lists(finite, min_size=n, max_size=n), st.lists(finite, min_size=n, max_size=n)
    )
)


def claim(id: str, agent: str, objective: str, token: int = 1) -> Claim:
    return Claim(id, token, agent, "write", ("src/",), 0, False, 0.0, 60.0, objective)


@given(vectors)
def test_the_score_is_symmetric_to_the_last_bit_and_bounded(
    pair: tuple[list[float], list[float]],
) -> None:
    a, b = tuple(pair[0]), tuple(pair[1])
    assert score(a, b) == score(b, a)
    assert -1.0 <= score(a, b) <= 1.0


@given(st.lists(finite, min_size=1, max_size=8))
def test_a_vector_scores_one_against_itself_and_zero_when_it_is_all_zeros(v: list[float]) -> None:
    a = tuple(v)
    if any(a):
        assert math.isclose(score(a, a), 1.0, rel_tol=1e-9)
    else:
        assert score(a, a) == 0.0


def test_subnormal_and_huge_components_lose_no_precision() -> None:
    tiny = (5e-324, 5e-324, 5e-324)
    assert math.isclose(score(tiny, tiny), 1.0, rel_tol=1e-9)  # 0.75 before
    huge = (1e308, 1e308)
    assert math.isclose(score(huge, huge), 1.0, rel_tol=1e-9)
    assert math.isclose(score(tiny, (1.0, 1.0, 1.0)), 1.0, rel_tol=1e-9)


def test_vectors_of_different_lengths_are_not_compared() -> None:
    with pytest.raises(ValueError, match="vectors of 2 and 3 dimensions"):
        score((1.0, 0.0), (1.0, 0.0, 0.0))


@given(
    st.lists(st.tuples(finite, finite), min_size=1, max_size=6),
    st.tuples(finite, finite),
    st.floats(min_value=-1.0, max_value=1.0),
    st.floats(min_value=-1.0, max_value=1.0),
)
def test_a_higher_threshold_never_warns_of_more_claims(
    others: list[tuple[float, float]], query: tuple[float, float], low: float, high: float
) -> None:
    low, high = min(low, high), max(low, high)
    table = [(claim(f"c{i}", "b", "x", token=i), v) for i, v in enumerate(others)]
    strict = {m.claim.id for m in overlaps(query, table, high)}
    lenient = {m.claim.id for m in overlaps(query, table, low)}
    assert strict <= lenient
    assert all(m.score >= high for m in overlaps(query, table, high))


def test_ranked_puts_the_closest_first_and_older_claims_first_on_a_tie() -> None:
    table = [
        (claim("c1", "b", "x", token=1), (0.0, 1.0)),
        (claim("c2", "b", "x", token=2), (1.0, 0.0)),
        (claim("c3", "b", "x", token=3), (1.0, 0.0)),
    ]
    assert [m.claim.id for m in ranked((1.0, 0.0), table)] == ["c2", "c3", "c1"]


def test_only_other_agents_claims_with_an_objective_are_compared() -> None:
    new = claim("c9", "a", "fix retries", token=9)
    live = [
        new,
        claim("c1", "a", "tune retries"),  # the same agent's own
        claim("c2", "b", "   "),  # no objective
        claim("c3", "b", "make timeouts configurable"),
    ]
    assert [c.id for c in comparable(new, live)] == ["c3"]
    assert comparable(claim("c8", "a", ""), live) == []


def test_a_warning_names_the_claim_its_holder_objective_and_score() -> None:
    other = claim("c3", "bob", "make request timeouts configurable")
    text = overlap_warning(Match(other, 0.4123), 0.2)
    assert text.startswith("objective similar to claim c3 of bob (score 0.41, threshold 0.20)")
    assert "'make request timeouts configurable' on src/" in text
    assert "granted all the same" in text


def test_a_search_result_is_the_claim_as_listed_with_its_score() -> None:
    shown = match_json(Match(claim("c3", "bob", "retry"), 0.41234), now=0.0)
    assert (shown["id"], shown["agent"], shown["objective"], shown["score"]) == (
        "c3",
        "bob",
        "retry",
        0.412,
    )
