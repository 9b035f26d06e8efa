"""The watchdog's rule: idle after ``idle_after`` without movement, active again on movement,
released ``release_after`` after the mark, never anything while it is off; the next look is
never later than a verdict could change, nor than ``check_s``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims import idle
from memkeeper.claims.idle import IdleRule, Watched, judge, next_look
from memkeeper.records import Event

HASH = "sha256:" + "0" * 64
times = st.floats(min_value=0, max_value=1e7, allow_nan=False)
spans = st.integers(min_value=1, max_value=100_000)


def event(type: str, actor: str) -> Event:
    return Event(1, "2026-01-01T00:00:00.000Z", actor, type, None, None, {}, HASH, HASH)


def test_a_claim_is_idle_from_idle_after_without_movement_on() -> None:
    rule = IdleRule(1200)
    assert judge(Watched("c1", 100.0), 1299.0, rule) == "none"
    assert judge(Watched("c1", 100.0), 1300.0, rule) == "idle"


def test_an_idle_claim_that_moved_since_its_mark_is_active_again() -> None:
    rule = IdleRule(1200)
    assert judge(Watched("c1", 100.0, idle_since=1300.0), 5000.0, rule) == "none"
    assert judge(Watched("c1", 1400.0, idle_since=1300.0), 1400.0, rule) == "active"


def test_an_idle_claim_is_released_release_after_after_its_mark_only_where_that_is_on() -> None:
    marked = Watched("c1", 100.0, idle_since=1300.0)
    assert judge(marked, 1899.0, IdleRule(1200, 600)) == "none"
    assert judge(marked, 1900.0, IdleRule(1200, 600)) == "release"
    assert judge(marked, 1e9, IdleRule(1200, 0)) == "none"


@given(moved=times, since=st.none() | times, now=times, release=st.integers(0, 10_000))
def test_off_decides_nothing(moved: float, since: float | None, now: float, release: int) -> None:
    assert judge(Watched("c", moved, since), now, IdleRule(0, release)) == "none"


@given(moved=times, quiet=times, after=spans)
def test_a_claim_not_marked_is_idle_exactly_when_quiet_for_idle_after(
    moved: float, quiet: float, after: int
) -> None:
    verdict = judge(Watched("c", moved), moved + quiet, IdleRule(after))
    assert verdict == ("idle" if (moved + quiet) - moved >= after else "none")


@given(moved=times, now=times, after=spans, release=st.integers(0, 100_000))
def test_the_next_look_is_never_after_a_verdict_changes(
    moved: float, now: float, after: int, release: int
) -> None:
    """Between now and the next look no verdict changes but for movement, which is gathered
    at the next look (at most ``check_s`` away)."""
    rule = IdleRule(after, release)
    watched = [Watched("a", moved), Watched("b", moved, idle_since=moved + after)]
    at = next_look(watched, now, rule)
    assert now <= at <= now + rule.check_s
    just_before = max(now, at - 1e-3)
    for w in watched:
        assert judge(w, just_before, rule) == judge(w, now, rule)


def test_it_looks_at_least_every_quarter_of_idle_after_and_every_minute() -> None:
    assert IdleRule(1200).check_s == 60.0
    assert IdleRule(20).check_s == 5.0
    assert next_look([], 0.0, IdleRule(0)) == float("inf")


@pytest.mark.parametrize(
    ("type", "actor", "work"),
    [
        ("section.patched", "agent-b", True),
        ("entry.appended", "agent-b", True),
        ("task.completed", "agent-b", True),
        ("message.sent", "agent-b", True),
        ("claim.renewed", "agent-b", False),
        ("message.delivered", "agent-b", False),
        ("message.acked", "agent-b", False),
        ("region.regenerated", "agent-b", False),
        ("section.patched", "agent-c", False),
    ],
)
def test_the_holders_writes_are_work_a_renewal_is_not(type: str, actor: str, work: bool) -> None:
    assert idle.is_work(event(type, actor), "agent-b") is work


@pytest.mark.parametrize(
    ("target", "base"),
    [("src/", "src"), ("src/app.py", "src/app.py"), ("docs/*.md", "docs"), ("**", ""),
     ("CLAUDE.md#build", "CLAUDE.md"), ("a/b*/c", "a")],
)  # fmt: skip
def test_the_literal_base_of_a_target_is_what_it_names_before_a_wildcard(
    target: str, base: str
) -> None:
    assert idle.literal_base(target) == base


def test_the_holders_message_says_what_to_do() -> None:
    text = idle.idle_text("c7", ["src/", "docs/"], 1200)
    assert text.startswith("your claim c7 on src/, docs/ has seen no change for 20 min")
    assert "memkeeper release c7" in text
    assert "a renewal alone is no progress" in text
