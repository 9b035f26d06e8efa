"""Claims through the Python API against a real store, with a fake clock and no sleeps:
granted with a token and a TTL, renewed, released, expired, in conflict with one another —
each operation one transaction that reads the table once."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from memkeeper import Busy, Claim, Invalid, Memory, Refused
from memkeeper.clock import FakeClock
from memkeeper.store.sqlite import Store
from tests.ops.conftest import START, kinds


def set_leases(sample: Path, default_ttl: int, max_ttl: int) -> None:
    policy = sample / ".memkeeper.yaml"
    text = policy.read_text().replace("default_ttl: 120", f"default_ttl: {default_ttl}")
    policy.write_text(text.replace("max_ttl: 3600", f"max_ttl: {max_ttl}"))


# --- lifecycle ---------------------------------------------------------------------------


def test_a_claim_is_granted_with_a_token_and_the_policy_default_ttl(
    agents: Callable[[str], Memory],
) -> None:
    a = agents("a")
    claim = a.claim(["src/api/"], objective="refactor the API")
    assert (claim.agent, claim.mode, claim.targets, claim.token) == ("a", "write", ("src/api/",), 1)
    assert (claim.granted_at, claim.expires_at) == (START, START + 120)
    (event,) = a.events()
    assert (event.type, event.actor) == ("claim.granted", "a")
    assert event.data["id"] == claim.id
    assert event.data["token"] == 1
    assert event.data["targets"] == ["src/api/"]
    assert event.data["objective"] == "refactor the API"
    assert event.data["expires_at"] == "2023-11-14T22:15:20.000Z"


def test_the_ttl_defaults_to_and_is_capped_by_the_policy(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    set_leases(sample, default_ttl=30, max_ttl=60)
    a = agents("a")
    assert a.claim("one").expires_at == START + 30
    assert a.claim("two", ttl=5).expires_at == START + 5
    assert a.claim("three", ttl=1000).expires_at == START + 60
    assert a.renew(a.claim("four").id, ttl=1000).expires_at == START + 60


def test_a_ttl_above_the_maximum_is_capped_with_a_warning(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    set_leases(sample, default_ttl=30, max_ttl=60)
    a = agents("a")
    claim = a.claim("one", ttl=1000)
    assert claim.expires_at == START + 60
    assert claim.warnings == (
        "ttl 1000 s is above the policy's leases.max_ttl of 60 s: granted for 60 s — "
        "renew before it expires, or raise max_ttl in .memkeeper.yaml",
    )
    assert a.renew(claim.id, ttl=90.5).warnings == (
        "ttl 90.5 s is above the policy's leases.max_ttl of 60 s: granted for 60 s — "
        "renew before it expires, or raise max_ttl in .memkeeper.yaml",
    )
    assert a.claim("two", ttl=60).warnings == ()
    assert a.renew(claim.id).warnings == ()
    assert a.claims()[0].warnings == ()  # the answer's warnings, never stored
    assert claim == replace(claim, warnings=())  # and no part of the claim's identity


def test_renew_extends_from_now_and_records_the_new_expiry(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a = agents("a")
    claim = a.claim("src/", ttl=60)
    clock.advance(50)
    renewed = a.renew(claim.id, ttl=60)
    assert renewed.expires_at == START + 110
    assert (renewed.token, renewed.granted_at) == (claim.token, claim.granted_at)
    event = a.events()[-1]
    assert (event.type, event.data["expires_at"]) == ("claim.renewed", "2023-11-14T22:15:10.000Z")
    clock.advance(59)
    assert [c.id for c in a.claims()] == [claim.id]


def test_release_frees_the_scope_and_records_how_long_it_was_held(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/")
    clock.advance(7)
    assert a.release(claim.id) == claim
    assert a.claims() == []
    assert b.claim("src/x.py").agent == "b"
    released = [e for e in a.events() if e.type == "claim.released"]
    assert [(e.actor, e.data["id"], e.data["held_s"]) for e in released] == [("a", claim.id, 7)]


def test_an_expired_claim_vanishes_with_an_event_and_blocks_nobody(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    old = a.claim("src/", ttl=10)
    clock.advance(10)
    new = b.claim("src/api/")
    assert kinds(a) == [
        ("claim.granted", "a", old.id),
        ("claim.expired", "a", old.id),
        ("claim.granted", "b", new.id),
    ]
    assert a.claims() == [new]


def test_the_sweep_the_daemon_calls_returns_what_expired(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a = agents("a")
    short, long = a.claim("x", ttl=5), a.claim("y", ttl=50)
    clock.advance(5)
    assert a.sweep_claims() == [short]
    assert a.sweep_claims() == []
    assert a.claims() == [long]


def test_tokens_strictly_increase_across_release_expiry_and_reopening(
    agents: Callable[[str], Memory], sample: Path, clock: FakeClock
) -> None:
    a = agents("a")
    tokens = [a.claim("x").token]
    a.release(a.claims()[0].id)
    tokens.append(a.claim("x", ttl=1).token)
    clock.advance(2)
    tokens.append(a.claim("x").token)
    a.close()
    reopened = Memory.open(sample, agent="b", clock=clock)
    a.release(a.claims()[0].id)
    tokens.append(reopened.claim("x").token)
    reopened.close()
    assert tokens == sorted(set(tokens))
    assert tokens[-1] == 4


# --- conflicts ---------------------------------------------------------------------------


def test_busy_names_each_holder_with_its_expiry(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim(["src/api/", "docs/"], ttl=90)
    clock.advance(30)
    with pytest.raises(Busy) as caught:
        b.claim(["README.md", "src/api/x.py"])
    busy = caught.value
    assert busy.reason == "held"
    assert busy.holders == [
        {
            "agent": "a",
            "id": held.id,
            "mode": "write",
            "targets": ["src/api/", "docs/"],
            "strict": False,
            "expires_at": "2023-11-14T22:14:50.000Z",
            "seconds_left": 60,
        }
    ]
    assert "a holds write claim" in busy.message
    assert "60 s left" in busy.message
    assert b.claim("README.md").agent == "b", "all-or-nothing: the refused claim took nothing"


def test_paths_overlap_on_whole_segments(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    a.claim("src/api/")
    assert b.claim("src/ap").targets == ("src/ap",)
    assert b.claim("src/apix/y.py").targets == ("src/apix/y.py",)
    for inside in ("src/api", "src/api/deep/x.py", "src/**/*.py", "src/"):
        with pytest.raises(Busy):
            b.claim(inside)


def test_readers_share_and_a_writer_waits_for_them(agents: Callable[[str], Memory]) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    a.claim("docs/", mode="read")
    b.claim("docs/x.md", mode="read")
    with pytest.raises(Busy) as caught:
        c.claim("docs/")
    assert {h["agent"] for h in caught.value.holders} == {"a", "b"}


def test_an_agents_own_claims_never_conflict(agents: Callable[[str], Memory]) -> None:
    a = agents("a")
    a.claim("src/")
    assert a.claim("src/api/x.py").agent == "a"


def test_only_the_holder_may_renew_or_release(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/")
    acts: list[Callable[[], Claim]] = [lambda: b.renew(claim.id), lambda: b.release(claim.id)]
    for act in acts:
        with pytest.raises(Refused) as caught:
            act()
        assert caught.value.reason == "not_holder"
    assert a.claims() == [claim]


def test_an_ended_claim_cannot_be_renewed_or_released(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a = agents("a")
    expiring, released = a.claim("x", ttl=10), a.claim("y")
    a.release(released.id)
    clock.advance(11)
    reasons = []
    acts: list[Callable[[], Claim]] = [
        lambda: a.renew(expiring.id),
        lambda: a.release(expiring.id),
        lambda: a.renew(released.id),
        lambda: a.release("c999"),
    ]
    for act in acts:
        with pytest.raises(Invalid) as caught:
            act()
        reasons.append(caught.value.reason)
    assert reasons == ["expired", "expired", "released", "unknown_claim"]
    assert ("claim.expired", "a", expiring.id) in kinds(a), "the sweep survived the error"


# --- clocks (issue 22 item 6) ------------------------------------------------------------------


def skewed(sample: Path, agent: str, skew: float) -> tuple[Memory, FakeClock]:
    """An agent whose process's wall clock is ``skew`` seconds off (its uptime is the
    machine's, as every process's)."""
    clock = FakeClock(START)
    clock.set(START + skew)
    return Memory.open(sample, agent=agent, clock=clock), clock


def test_an_agent_whose_wall_clock_is_a_minute_ahead_cannot_take_a_live_claim(
    sample: Path,
) -> None:
    a, clock = skewed(sample, "a", 0)
    held = a.claim("src/", ttl=30)
    b, ahead = skewed(sample, "b", +60)
    with pytest.raises(Busy) as caught:
        b.claim("src/api/")
    assert caught.value.holders[0]["seconds_left"] == 30
    assert b.claims() == [held]
    for each in (clock, ahead):
        each.advance(30)
    assert b.claim("src/api/").token == held.token + 1
    assert [t for t, _, _ in kinds(a)] == ["claim.granted", "claim.expired", "claim.granted"]
    a.close()
    b.close()


def test_a_claim_taken_under_a_wall_clock_a_minute_behind_lasts_its_whole_ttl(
    sample: Path,
) -> None:
    b, behind = skewed(sample, "b", -60)
    held = b.claim("src/", ttl=30)
    a, clock = skewed(sample, "a", 0)
    for each in (clock, behind):
        each.advance(29.9)
    with pytest.raises(Busy):
        a.claim("src/")
    for each in (clock, behind):
        each.advance(0.1)
    assert a.claim("src/").token == held.token + 1
    a.close()
    b.close()


def test_a_reboot_ends_every_claim_of_the_boot_before(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    old = a.claim("src/", ttl=600)
    clock.reboot(down=5)
    new = b.claim("src/")
    assert kinds(a) == [
        ("claim.granted", "a", old.id),
        ("claim.expired", "a", old.id),
        ("claim.granted", "b", new.id),
    ]
    assert new.token == old.token + 1


# --- writes under claims -------------------------------------------------------------------


# --- waiting ---------------------------------------------------------------------------------


# --- metrics ---------------------------------------------------------------------------------


@pytest.mark.sqlite_only  # SQLite's own syncs and statements, or a root without a store
def test_a_release_commits_without_waiting_for_the_disk_a_grant_does_not(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14 item 4: one synced commit per claim+release pair; the grant's (its fencing
    token) is the synced one."""
    memory.release(memory.claim("CLAUDE.md#build", ttl=60).id)  # the file indexed, verdicts cached
    synced: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    claim = memory.claim("CLAUDE.md#build", ttl=60)
    assert len(synced) == 1  # the grant waited for the log's sync
    memory.release(claim.id)
    assert len(synced) == 1  # the release did not
    assert [e.type for e in memory.events()[-2:]] == ["claim.granted", "claim.released"]


@pytest.mark.sqlite_only  # SQLite's own syncs and statements, or a root without a store
def test_each_operation_reads_the_claim_table_once(memory: Memory) -> None:
    """Issue 14 item 4: a transaction reads the claims and the queue in one statement and
    works on that copy: no step reads them again, not even after its own writes."""
    statements: list[str] = []
    store = memory.workspace.store
    assert isinstance(store, Store)
    store._db.set_trace_callback(statements.append)
    try:
        claim = memory.claim("src/inventory/", ttl=60)
        memory.release(claim.id)
    finally:
        store._db.set_trace_callback(None)
    reads = [s for s in statements if s.startswith("SELECT") and " FROM claims" in s]
    assert len(reads) == 2, reads  # one per transaction
    assert all(" FROM waiters" in s for s in reads)  # the queue in the same statement
    assert sum(" FROM waiters" in s for s in statements) == 2
