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


# -- the uptime: what claims expire by on one machine (issue 22 item 6) -----------------------


def test_a_fake_clocks_uptime_moves_with_time_passing_and_not_with_a_step() -> None:
    clock = FakeClock(NOW)
    assert clock.since_boot() == ("fake-boot-1", 0.0)
    clock.advance(30)
    clock.set(NOW - 3600)  # the wall clock stepped back an hour: the uptime does not move
    assert clock.since_boot() == ("fake-boot-1", 30.0)
    clock.set(NOW + 3600)
    assert clock.since_boot() == ("fake-boot-1", 30.0)


def test_a_fake_reboot_is_a_new_boot_counting_from_zero() -> None:
    clock = FakeClock(NOW)
    clock.advance(100)
    clock.reboot(down=20)
    assert clock.since_boot() == ("fake-boot-2", 0.0)
    assert clock.now() == NOW + 120
    clock.advance(5)
    assert clock.since_boot() == ("fake-boot-2", 5.0)


def test_the_system_uptime_is_the_kernels_whatever_the_wall_clock_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read from /proc, not from a libc clock: a process whose wall clock (or libc's clocks,
    under libfaketime) is set a minute ahead reads the same uptime as every other."""
    with open("/proc/sys/kernel/random/boot_id") as handle:
        boot = handle.read().strip()
    with open("/proc/uptime") as handle:
        before = float(handle.read().split()[0])
    monkeypatch.setattr("memkeeper.clock.time.time", lambda: NOW + 60)
    monkeypatch.setattr("memkeeper.clock.time.clock_gettime", lambda _: NOW + 60)
    found, uptime = SystemClock().since_boot()
    assert found == boot
    assert before <= uptime < before + 5


def test_without_proc_the_system_uptime_is_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Elsewhere than Linux: each process's wall clock, as before (and the epoch 0)."""
    monkeypatch.setattr("memkeeper.clock.UPTIME_FILE", "/nonexistent/uptime")
    monkeypatch.setattr("memkeeper.clock.time.time", lambda: 1234.5)
    assert SystemClock().since_boot() == ("", 1234.5)
