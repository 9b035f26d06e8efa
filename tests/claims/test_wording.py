"""How claims look from outside: event data, JSON for the CLI, and why a claim is busy."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Claim, Mode, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.claims.wording import (
    busy_message,
    claim_data,
    claim_json,
    holder_json,
    waiter_json,
)
from memkeeper.clock import FakeClock
from memkeeper.events import iso_utc

NOW = 1_700_000_000.0


def held(
    id: str = "c1",
    agent: str = "agent-a",
    *targets: str,
    mode: Mode = "write",
    strict: bool = False,
    expires_at: float = NOW + 60,
) -> Claim:
    return Claim(id, 3, agent, mode, targets or ("src/",), 1, strict, NOW - 5, expires_at, "fix")


def asked(id: str = "r1", agent: str = "agent-b", *targets: str, priority: int = 0) -> Request:
    return Request(id, agent, "write", targets or ("src/",), priority, False, 60.0, "", 4)


# --- JSON ------------------------------------------------------------------------------------


def test_claim_data_records_what_an_event_needs_in_json_types() -> None:
    claim = held("c1", "agent-a", "src/", "CLAUDE.md#build", strict=True)
    assert claim_data(claim) == {
        "id": "c1",
        "token": 3,
        "mode": "write",
        "targets": ["src/", "CLAUDE.md#build"],
        "priority": 1,
        "strict": True,
        "expires_at": iso_utc(NOW + 60),
        "objective": "fix",
    }
    assert json.loads(json.dumps(claim_data(claim))) == claim_data(claim)


def test_claim_json_adds_the_holder_the_grant_time_and_whole_seconds_left() -> None:
    found = claim_json(held(expires_at=NOW + 10.2), NOW)
    assert (found["agent"], found["granted_at"]) == ("agent-a", iso_utc(NOW - 5))
    assert found["seconds_left"] == 11  # rounded up: 10.2 s is not yet 10
    assert set(found) == {*claim_data(held()), "agent", "granted_at", "seconds_left"}


def test_an_expired_claim_has_no_seconds_left_not_negative_ones() -> None:
    clock = FakeClock(NOW)
    claim = held(expires_at=NOW + 1)
    clock.advance(30)
    assert claim_json(claim, clock.now())["seconds_left"] == 0


def test_holder_json_keeps_only_what_a_blocked_writer_needs() -> None:
    holder = holder_json(held(strict=True), NOW)
    assert list(holder) == [
        "agent",
        "id",
        "mode",
        "targets",
        "strict",
        "expires_at",
        "seconds_left",
    ]
    assert (holder["agent"], holder["strict"], holder["seconds_left"]) == ("agent-a", True, 60)


def test_waiter_json_shows_the_request_its_process_and_time_left() -> None:
    row = WaiterRow(asked("r1", "agent-b", "docs/", priority=2), 99, NOW + 4.5, "waiting", None)
    assert waiter_json(row, NOW) == {
        "id": "r1",
        "agent": "agent-b",
        "mode": "write",
        "targets": ["docs/"],
        "priority": 2,
        "arrival": 4,
        "pid": 99,
        "seconds_left": 5,
    }
    assert waiter_json(row, NOW + 100)["seconds_left"] == 0


@given(left=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_seconds_left_is_never_negative_and_never_rounds_down(left: float) -> None:
    claim = held(expires_at=NOW + left)
    row = WaiterRow(asked(), 1, NOW + left, "waiting", None)
    for shown in (claim_json(claim, NOW)["seconds_left"], waiter_json(row, NOW)["seconds_left"]):
        assert isinstance(shown, int)
        assert shown >= 0
        assert shown >= (NOW + left) - NOW


# --- busy messages ---------------------------------------------------------------------------


def test_a_held_scope_names_the_holder_and_suggests_waiting() -> None:
    message = busy_message(asked(), "held", [held()], [], NOW)
    assert message == (
        "src/ is busy: agent-a holds write claim c1 on src/ (60 s left)"
        " — try again later, or queue with --wait SECONDS"
    )


def test_a_strict_holder_is_marked_strict() -> None:
    message = busy_message(asked(), "held", [held(strict=True)], [], NOW)
    assert "agent-a holds strict write claim c1" in message


def test_holders_and_earlier_waiters_are_all_named_in_turn() -> None:
    holders = [held("c1", "agent-a"), held("c2", "agent-c", "src/api/", mode="read")]
    ahead = [asked("w1", "agent-d", priority=5)]
    message = busy_message(asked("r9", "agent-b", "src/", "docs/"), "timeout", holders, ahead, NOW)
    assert message.startswith("gave up waiting for src/, docs/: ")
    assert (
        "agent-a holds write claim c1 on src/ (60 s left); "
        "agent-c holds read claim c2 on src/api/ (60 s left); "
        "agent-d queued first (w1, priority 5)"
    ) in message
    assert message.endswith(" — try again later, or wait longer")


def test_nobody_in_the_way_is_said_plainly() -> None:
    assert "src/ is busy: nobody now — " in busy_message(asked(), "held", [], [], NOW)


@pytest.mark.parametrize(
    ("reason", "start", "todo"),
    [
        ("held", "src/ is busy", "queue with --wait SECONDS"),
        ("timeout", "gave up waiting for src/", "wait longer"),
        ("deadlock", "claim r1 on src/ was aborted to break a deadlock", "then claim again"),
        ("expired", "claim r1 on src/ was granted but expired", "with a longer --ttl"),
    ],
)
def test_each_reason_says_what_happened_and_what_to_do(reason: str, start: str, todo: str) -> None:
    message = busy_message(asked(), reason, [held()], [], NOW)
    assert message.startswith(start)
    assert " — " in message
    assert message.endswith(todo)


def test_a_deadlock_names_who_waits_on_the_aborted_claim() -> None:
    message = busy_message(asked(), "deadlock", [held("c7", "agent-z")], [], NOW)
    assert "(its holders wait for you): agent-z holds write claim c7" in message


def test_an_unforeseen_reason_is_still_named() -> None:
    assert busy_message(asked(), "abandoned", [], [], NOW) == "claim r1 on src/ was abandoned"
