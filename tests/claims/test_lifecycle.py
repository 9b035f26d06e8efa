"""A claim record's states: what each transition allows and records."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims import lifecycle as life
from memkeeper.claims.decisions import Claim
from memkeeper.claims.plan import Plan
from memkeeper.errors import Conflict, Invalid, Refused

CLAIM = Claim("c1", 7, "a", "write", ("src/",), 0, False, 100.0, 160.0, "fix retries")


def record() -> life.ClaimRecord:
    return life.open_record(CLAIM, Plan(branch="b"), "2026-12-06T00:00:00Z")


def test_a_granted_claim_opens_an_active_record_at_revision_one() -> None:
    r = record()
    assert (r.state, r.rev, r.token, r.plan.branch) == ("active", 1, 7, "b")
    assert life.ClaimRecord.from_json(r.to_json()) == r


def test_each_move_bumps_the_revision_and_leaves_a_step() -> None:
    r = life.move(record(), "abandoned", at="t", by="a", ended_at=150.0, reason="stuck")
    assert (r.state, r.rev, r.ended_at, r.reason) == ("abandoned", 2, 150.0, "stuck")
    assert r.history[-1] == life.Step(2, "abandoned", "t", "a", "claim.abandoned")


@given(st.sampled_from(sorted(life.TERMINAL)), st.sampled_from(life.STATES))
def test_nothing_leaves_a_terminal_state(final: life.State, to: life.State) -> None:
    r = record()
    paths: dict[str, list[life.State]] = {
        "completed": ["completed"], "released": ["released"],
        "taken-over": ["expired", "taken-over"],
    }  # fmt: skip
    path = paths[final]
    for state in path:
        r = life.move(r, state, at="t", by="a", ended_at=1.0)
    with pytest.raises(Invalid, match="final"):
        life.move(r, to, at="t", by="a")


def test_suspended_goes_back_to_active_but_never_completes() -> None:
    r = life.move(record(), "suspended", at="t", by="a")
    assert life.move(r, "active", at="t", by="a").state == "active"
    with pytest.raises(Invalid, match="it may become: abandoned, active"):
        life.move(r, "completed", at="t", by="a")


def test_a_stale_expected_revision_is_a_conflict_carrying_the_record() -> None:
    r = life.rescope(record(), ("src/", "docs/"), 9, at="t")
    life.check_rev(r, 2)
    with pytest.raises(Conflict) as caught:
        life.check_rev(r, 1)
    assert caught.value.reason == "stale_revision"
    assert caught.value.to_json()["current"]["rev"] == 2
    assert "--expect-rev 2" in caught.value.recover


def test_only_the_holder_acts_on_a_claim() -> None:
    with pytest.raises(Refused, match="held by a, not b"):
        life.check_holder(record(), "b", "complete")


def test_a_takeover_waits_for_the_grace_period_and_needs_an_ended_claim() -> None:
    with pytest.raises(Invalid, match="live"):
        life.check_takeover(record(), "b", 200.0, 60)
    gone = life.move(record(), "expired", at="t", by="a", ended_at=200.0)
    with pytest.raises(Invalid, match="30 s left") as caught:
        life.check_takeover(gone, "b", 230.0, 60)
    assert caught.value.reason == "grace"
    life.check_takeover(gone, "b", 260.0, 60)


def test_an_abandon_needs_a_reason() -> None:
    with pytest.raises(Invalid, match="--reason"):
        life.reason_text("  ")


TEXT = st.text(max_size=12)  # any Unicode: quotes, controls, what json escapes
TEXTS = st.lists(TEXT, max_size=3).map(tuple)
MODES = st.sampled_from(["read", "write"])
MOMENTS = st.floats(0, 1e10)
CLAIMS = st.builds(
    Claim, TEXT, st.integers(0, 2**63), TEXT, MODES, TEXTS, st.integers(-5, 5), st.booleans(),
    MOMENTS, MOMENTS, TEXT,
)  # fmt: skip
PLANS = st.builds(Plan, TEXT, TEXT, TEXT, TEXTS, TEXTS)
ENDED_AT = st.floats(allow_nan=False) | st.integers(-(2**40), 2**40).map(float)
ENDS = st.sampled_from(sorted(life.NEXT["active"]))


@given(CLAIMS, PLANS, ENDS, TEXT, TEXT, TEXT, ENDED_AT, TEXT)
def test_an_ended_records_json_written_directly_is_the_dataclasses_own(
    claim: Claim,
    plan: Plan,
    to: life.State,
    granted: str,
    at: str,
    by: str,
    ended_at: float,
    reason: str,
) -> None:
    """What a release or an expiry stores without the dataclasses (issue 24 item 1's cost):
    byte for byte the JSON of ``move(open_record(…))``, which reads back as that record."""
    record = life.move(
        life.open_record(claim, plan, granted), to, at=at, by=by, ended_at=ended_at, reason=reason
    )
    body = life.ended_body(claim, plan, granted, to, at=at, by=by, ended_at=ended_at, reason=reason)
    assert body == json.dumps(record.to_json())
    assert life.ClaimRecord.from_json(json.loads(body)) == record


@pytest.mark.parametrize("to", ["active", "taken-over"])
def test_a_live_claim_ends_only_as_the_states_allow(to: life.State) -> None:
    with pytest.raises(ValueError, match="cannot end"):
        life.ended_body(CLAIM, Plan(), "g", to, at="t", by="a", ended_at=1.0)
