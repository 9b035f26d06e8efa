"""Claim decisions: conflicts, expiry, renewal, queue order, deadlocks, write checks."""

from __future__ import annotations

import pytest

from memkeeper.claims.decisions import (
    Claim,
    Mode,
    Request,
    blockers,
    check_release,
    conflicts,
    deadlock_victim,
    effective_priority,
    grant,
    grantable,
    make_request,
    queue_order,
    renew,
    split_expired,
    waiters_ahead,
    would_deadlock,
    write_permission,
)
from memkeeper.clock import FakeClock
from memkeeper.errors import Invalid, Refused

NOW = 1_700_000_000.0


def held(
    id: str,
    agent: str,
    *targets: str,
    mode: Mode = "write",
    priority: int = 0,
    strict: bool = False,
    expires_at: float = NOW + 60,
    token: int = 1,
) -> Claim:
    return Claim(id, token, agent, mode, targets, priority, strict, NOW, expires_at, "")


def asked(
    id: str, agent: str, *targets: str, mode: Mode = "write", priority: int = 0, arrival: int = 0
) -> Request:
    return Request(id, agent, mode, targets, priority, False, 60.0, "", arrival)


# --- conflicts and expiry ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode_a", "mode_b", "conflict"),
    [
        ("read", "read", False),
        ("read", "write", True),
        ("write", "read", True),
        ("write", "write", True),
    ],
)
def test_only_pairs_with_a_writer_conflict(mode_a: Mode, mode_b: Mode, conflict: bool) -> None:
    assert (
        conflicts(held("c1", "a", "src/", mode=mode_a), asked("r", "b", "src/x", mode=mode_b))
        is conflict
    )


def test_an_agents_own_claims_never_conflict() -> None:
    assert not conflicts(held("c1", "a", "src/"), asked("r", "a", "src/x.py"))
    assert blockers((held("c1", "a", "src/"),), asked("r", "a", "src/")) == ()


def test_a_claim_on_several_targets_is_blocked_by_any_of_them() -> None:
    live = (held("c1", "b", "docs/"), held("c2", "c", "tests/"), held("c3", "d", "bench/"))
    request = asked("r", "a", "src/", "tests/unit/", "docs/index.md")
    assert [c.id for c in blockers(live, request)] == ["c1", "c2"]


def test_a_claim_is_live_until_the_instant_it_expires() -> None:
    clock = FakeClock(NOW)
    claim = held("c1", "a", "src/", expires_at=NOW + 10)
    clock.advance(9.999)
    assert split_expired([claim], clock.now()) == ((claim,), ())
    clock.advance(0.001)
    assert clock.now() == claim.expires_at
    assert split_expired([claim], clock.now()) == ((), (claim,))


def test_expired_claims_never_block_a_new_claim() -> None:
    clock = FakeClock(NOW)
    claims = [held("c1", "b", "src/", expires_at=NOW + 5)]
    clock.advance(5)
    live, expired = split_expired(claims, clock.now())
    assert blockers(live, asked("r", "a", "src/")) == ()
    assert [c.id for c in expired] == ["c1"]


# --- grant, renew, release ---------------------------------------------------------------


def test_grant_caps_the_ttl_and_keeps_the_request() -> None:
    request = make_request("r1", "a", ["./src//"], ttl=7200, priority=3, arrival=1)
    claim = grant(request, token=7, now=NOW, ttl_cap=3600)
    assert (claim.id, claim.token, claim.targets, claim.priority) == ("r1", 7, ("src/",), 3)
    assert (claim.granted_at, claim.expires_at) == (NOW, NOW + 3600)
    assert grant(request, 8, NOW, ttl_cap=99999).expires_at == NOW + 7200


@pytest.mark.parametrize("ttl", [0.0, -1.0, float("nan")])
def test_a_ttl_must_be_positive(ttl: float) -> None:
    with pytest.raises(Invalid, match="--ttl"):
        make_request("r1", "a", ["src/"], ttl=ttl, arrival=1)


def test_make_request_needs_a_target_and_a_known_mode() -> None:
    with pytest.raises(Invalid, match="at least one target"):
        make_request("r1", "a", [], ttl=10, arrival=1)
    with pytest.raises(Invalid, match="--mode read"):
        make_request("r1", "a", ["x"], ttl=10, arrival=1, mode="exclusive")  # type: ignore[arg-type]
    assert make_request("r", "a", ["x", "./x"], ttl=1, arrival=1).targets == ("x",)


def test_renew_extends_from_now_and_keeps_the_token() -> None:
    clock = FakeClock(NOW)
    claim = held("c1", "a", "src/", expires_at=NOW + 10, token=4)
    clock.advance(8)
    renewed = renew(claim, "a", ttl=30, now=clock.now(), ttl_cap=3600)
    assert (renewed.expires_at, renewed.token, renewed.granted_at) == (NOW + 38, 4, NOW)
    assert renew(claim, "a", ttl=9999, now=clock.now(), ttl_cap=60).expires_at == NOW + 68


def test_only_the_holder_may_renew_or_release() -> None:
    claim = held("c1", "a", "src/")
    with pytest.raises(Refused, match="only its holder") as error:
        renew(claim, "b", ttl=30, now=NOW, ttl_cap=3600)
    assert error.value.fields["reason"] == "not_holder"
    with pytest.raises(Refused) as error:
        check_release(claim, "b")
    assert error.value.fields["reason"] == "not_holder"
    check_release(claim, "a")


def test_an_expired_claim_cannot_be_renewed() -> None:
    clock = FakeClock(NOW)
    claim = held("c1", "a", "src/", expires_at=NOW + 10)
    clock.advance(10)
    with pytest.raises(Invalid, match="take a new claim") as error:
        renew(claim, "a", ttl=30, now=clock.now(), ttl_cap=3600)
    assert error.value.fields["reason"] == "expired"


# --- the queue ---------------------------------------------------------------------------


def test_waiters_are_served_by_priority_then_arrival() -> None:
    live = (held("c1", "z", "src/"),)
    waiters = (
        asked("w1", "a", "src/", priority=1, arrival=1),
        asked("w2", "b", "src/", priority=5, arrival=2),
        asked("w3", "c", "src/", priority=5, arrival=3),
    )
    assert [w.id for w in queue_order(live, waiters)] == ["w2", "w3", "w1"]


def test_a_holder_inherits_the_priority_of_whoever_waits_on_it() -> None:
    # low holds X and waits for Z (held by other); high waits for X; medium then asks for Z.
    live = (held("x", "low", "X/"), held("z", "other", "Z/"))
    low_wants_z = asked("lz", "low", "Z/", priority=1, arrival=1)
    high_wants_x = asked("hx", "high", "X/", priority=10, arrival=2)
    medium_wants_z = asked("mz", "medium", "Z/", priority=5, arrival=3)
    waiters = (low_wants_z, high_wants_x, medium_wants_z)
    assert effective_priority(live, waiters, low_wants_z) == 10
    assert [w.id for w in queue_order(live, waiters)] == ["lz", "hx", "mz"]
    released = (held("x", "low", "X/"),)  # other lets go of Z
    assert grantable(released, waiters, low_wants_z)
    assert not grantable(released, waiters, medium_wants_z)
    assert waiters_ahead(released, waiters, medium_wants_z) == (low_wants_z,)


def test_without_a_high_waiter_the_medium_one_goes_first() -> None:
    live = (held("x", "low", "X/"),)
    waiters = (
        asked("lz", "low", "Z/", priority=1, arrival=1),
        asked("mz", "medium", "Z/", priority=5, arrival=3),
    )
    assert [w.id for w in queue_order(live, waiters)] == ["mz", "lz"]
    assert grantable(live, waiters, waiters[1])


def test_inheritance_is_transitive() -> None:
    live = (held("a", "A", "a/"), held("b", "B", "b/"), held("c", "C", "c/"))
    waiters = (
        asked("Ab", "A", "b/", priority=1, arrival=1),  # A waits on B
        asked("Bc", "B", "c/", priority=2, arrival=2),  # B waits on C
        asked("Da", "D", "a/", priority=9, arrival=3),  # D waits on A
    )
    assert [effective_priority(live, waiters, w) for w in waiters] == [9, 9, 9]


def test_a_later_reader_does_not_starve_an_earlier_writer() -> None:
    live = (held("c1", "a", "docs/", mode="read"),)
    writer = asked("w", "b", "docs/", mode="write", arrival=1)
    reader = asked("r", "c", "docs/guide.md", mode="read", arrival=2)
    assert blockers(live, reader) == ()
    assert not grantable(live, (writer,), reader)
    assert grantable(live, (writer,), asked("r2", "c", "src/", mode="read", arrival=3))
    assert grantable((), (writer, reader), writer)


# --- deadlocks ---------------------------------------------------------------------------


def test_a_two_agent_cycle_aborts_the_lower_priority_requester() -> None:
    live = (held("cx", "A", "X"), held("cy", "B", "Y"))
    a_waits = (asked("ay", "A", "Y", priority=5, arrival=1),)
    b_asks = asked("bx", "B", "X", priority=1, arrival=2)
    assert deadlock_victim(live, a_waits) is None
    assert would_deadlock(live, a_waits, b_asks)
    assert deadlock_victim(live, (*a_waits, b_asks)) == "bx"
    b_higher = asked("bx", "B", "X", priority=9, arrival=2)
    assert deadlock_victim(live, (*a_waits, b_higher)) == "ay"


def test_a_priority_tie_in_a_cycle_aborts_the_later_arrival() -> None:
    live = (held("cx", "A", "X"), held("cy", "B", "Y"))
    waiters = (asked("ay", "A", "Y", arrival=1), asked("bx", "B", "X", arrival=2))
    assert deadlock_victim(live, waiters) == "bx"


def test_a_three_agent_cycle_aborts_its_lowest_priority_member() -> None:
    live = (held("cx", "A", "X"), held("cy", "B", "Y"), held("cz", "C", "Z"))
    waiters = (
        asked("ay", "A", "Y", priority=3, arrival=1),
        asked("bz", "B", "Z", priority=1, arrival=2),
    )
    c_asks = asked("cx2", "C", "X", priority=2, arrival=3)
    assert not would_deadlock(live, waiters[:1], asked("bz", "B", "Z", arrival=2))
    assert would_deadlock(live, waiters, c_asks)
    assert deadlock_victim(live, (*waiters, c_asks)) == "bz"
    remaining = (waiters[0], c_asks)
    assert deadlock_victim(live, remaining) is None


def test_a_chain_of_waits_is_not_a_deadlock() -> None:
    live = (held("cy", "B", "Y"), held("cz", "C", "Z"))
    waiters = (asked("ay", "A", "Y", arrival=1), asked("bz", "B", "Z", arrival=2))
    assert deadlock_victim(live, waiters) is None


def test_growing_a_claim_behind_ones_own_waiter_is_a_deadlock() -> None:
    # A holds X; B waits for X; A asks for X and Y, queued behind B, which waits for A.
    live = (held("cx", "A", "X"),)
    b_waits = (asked("bx", "B", "X", priority=1, arrival=1),)
    a_grows = asked("axy", "A", "X", "Y", priority=1, arrival=2)
    assert deadlock_victim(live, (*b_waits, a_grows)) == "axy"
    a_urgent = asked("axy", "A", "X", "Y", priority=5, arrival=2)
    assert not would_deadlock(live, b_waits, a_urgent)
    assert grantable(live, b_waits, a_urgent)


def test_a_grant_can_close_a_cycle_among_earlier_waiters() -> None:
    # a waits to write src/ past c's read; b queues its read behind a; then b's urgent read
    # jumps the queue and is granted, so a now waits on b, which waits behind a.
    a_writes = asked("r6", "a", "src/", priority=0, arrival=6)
    b_reads = asked("r7", "b", "src/", mode="read", priority=0, arrival=7)
    before = (held("c", "c", "src/", mode="read"),)
    assert deadlock_victim(before, (a_writes, b_reads)) is None
    urgent = asked("r9", "b", "src/", mode="read", priority=1, arrival=9)
    assert grantable(before, (a_writes, b_reads), urgent)
    after = (*before, held("r9", "b", "src/", mode="read"))
    assert deadlock_victim(after, (a_writes, b_reads)) == "r7"


# --- writes ------------------------------------------------------------------------------


def test_a_write_under_an_advisory_claim_warns_with_holder_and_time_left() -> None:
    claims = [held("c1", "agent-a", "CLAUDE.md#build", expires_at=NOW + 41.5)]
    decision = write_permission(claims, "agent-b", "CLAUDE.md#build", None, NOW)
    assert decision.refusal is None
    assert decision.holders == tuple(claims)
    assert decision.warnings == ("agent-a holds write claim c1 on CLAUDE.md#build (42 s left)",)


def test_a_write_under_a_strict_claim_is_refused() -> None:
    claims = [held("c1", "agent-a", "CLAUDE.md", strict=True)]
    decision = write_permission(claims, "agent-b", "CLAUDE.md#build", None, NOW)
    assert decision.refusal is not None
    assert "agent-a" in decision.refusal
    assert "60 s left" in decision.refusal
    assert decision.holders == tuple(claims)


def test_a_write_under_another_agents_read_claim_warns_too() -> None:
    claims = [held("c1", "agent-a", "docs/", mode="read")]
    assert write_permission(claims, "agent-b", "docs/x.md", None, NOW).warnings != ()


@pytest.mark.parametrize(
    "claims",
    [
        [held("c1", "agent-b", "CLAUDE.md", strict=True)],  # one's own
        [held("c1", "agent-a", "CLAUDE.md", strict=True, expires_at=NOW)],  # expired
        [held("c1", "agent-a", "CLAUDE.md#test", strict=True)],  # a sibling section
        [held("c1", "agent-a", "AGENTS.md", strict=True)],  # another file
    ],
)
def test_a_write_outside_others_live_claims_is_silent(claims: list[Claim]) -> None:
    assert write_permission(claims, "agent-b", "CLAUDE.md#build", None, NOW) == write_permission(
        [], "agent-b", "CLAUDE.md#build", None, NOW
    )


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        (held("c1", "agent-b", "CLAUDE.md", expires_at=NOW), "is expired"),
        (held("c9", "agent-b", "CLAUDE.md"), "not a live claim"),
        (held("c1", "agent-a", "CLAUDE.md"), "belongs to agent-a"),
        (held("c1", "agent-b", "CLAUDE.md", mode="read"), "--mode write"),
        (held("c1", "agent-b", "CLAUDE.md#test"), "does not cover"),
    ],
)
def test_a_fenced_write_needs_a_live_own_covering_write_claim(claim: Claim, why: str) -> None:
    decision = write_permission([claim], "agent-b", "CLAUDE.md#build", "c1", NOW)
    assert decision.refusal is not None
    assert why in decision.refusal


@pytest.mark.parametrize("scope", ["CLAUDE.md#project", "CLAUDE.md", "**", "*.md"])
def test_a_fenced_write_under_a_covering_claim_is_allowed(scope: str) -> None:
    claims = [held("c1", "agent-b", scope)]
    decision = write_permission(claims, "agent-b", "./CLAUDE.md#project/build", "c1", NOW)
    assert decision == write_permission([], "agent-b", "CLAUDE.md#project/build", None, NOW)


def test_a_request_bounds_its_targets_objective_and_priority() -> None:
    with pytest.raises(Invalid, match="names 257 targets; at most 256"):
        make_request("r", "a", [f"t{n}" for n in range(257)], ttl=60.0, arrival=1)
    with pytest.raises(Invalid, match="the objective is 10,000,000 characters long"):
        make_request("r", "a", ["t"], objective="x" * 10_000_000, ttl=60.0, arrival=1)
    with pytest.raises(Invalid, match="the priority must be a whole number"):
        make_request("r", "a", ["t"], priority=2**64, ttl=60.0, arrival=1)
