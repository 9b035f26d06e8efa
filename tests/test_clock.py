"""The clock seam: the system clock in production, a fake one that moves only when told."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.clock import Clock, FakeClock, SystemClock

NOW = 1_700_000_000.0


def test_the_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock(100.0)
    assert clock.now() == 100.0
    assert clock.advance(2.5) == 102.5
    clock.set(50.0)
    assert clock.now() == 50.0
    with pytest.raises(ValueError, match="negative"):
        clock.advance(-1)


def test_the_system_clock_reads_epoch_seconds() -> None:
    assert SystemClock().now() > NOW


def read(clock: Clock) -> float:
    """Anything with ``now()`` is a clock (checked by mypy, not at run time)."""
    return clock.now()


def test_both_clocks_serve_where_a_clock_is_wanted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memkeeper.clock.time.time", lambda: 1234.5)
    assert read(SystemClock()) == 1234.5
    assert read(FakeClock(99.0)) == 99.0


def test_a_fake_clock_starts_at_a_fixed_instant_by_default() -> None:
    assert FakeClock().now() == NOW
    assert FakeClock().now() == FakeClock().now()


def test_a_fake_clock_keeps_time_as_a_float() -> None:
    clock = FakeClock(5)
    assert type(clock.now()) is float
    clock.set(7)
    assert type(clock.now()) is float


def test_advancing_by_nothing_stays_put() -> None:
    clock = FakeClock(NOW)
    assert clock.advance(0) == NOW
    assert clock.now() == NOW


def test_a_refused_negative_advance_leaves_the_time_alone() -> None:
    clock = FakeClock(NOW)
    with pytest.raises(ValueError, match=r"cannot advance by a negative -0\.5"):
        clock.advance(-0.5)
    assert clock.now() == NOW


def test_setting_the_clock_back_is_allowed() -> None:
    clock = FakeClock(NOW)
    clock.set(NOW - 3600)
    assert clock.now() == NOW - 3600
    assert clock.advance(1) == NOW - 3599


@given(st.lists(st.floats(min_value=0, max_value=1e6), max_size=20))
def test_a_fake_clock_never_runs_backwards_on_its_own(steps: list[float]) -> None:
    clock = FakeClock(NOW)
    expected = NOW
    for step in steps:
        before = clock.now()
        expected += step
        assert clock.advance(step) == clock.now() == expected
        assert clock.now() >= before
