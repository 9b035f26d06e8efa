"""The claims' clock on one machine (issue 22 item 6): one epoch per boot, so every process
reads the same time whatever its wall clock says; a new boot, a new epoch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.epoch import Epoch, claim_time, decode

WALL = 1_800_000_000.0


def test_the_first_look_of_a_boot_starts_its_epoch_at_the_wall_clock_minus_the_uptime() -> None:
    now, epoch = claim_time(None, "boot-1", 500.0, WALL)
    assert (now, epoch) == (WALL, Epoch("boot-1", WALL - 500.0))


@given(st.floats(-3600, 3600), st.floats(0, 1e6))
def test_every_later_look_of_the_boot_reads_the_epoch_plus_the_uptime_whatever_its_wall(
    skew: float, uptime: float
) -> None:
    kept = Epoch("boot-1", WALL)
    now, epoch = claim_time(kept, "boot-1", uptime, WALL + uptime + skew)
    assert now == WALL + uptime
    assert epoch is kept  # nothing to store


def test_another_boot_starts_a_new_epoch() -> None:
    kept = Epoch("boot-1", WALL)
    now, epoch = claim_time(kept, "boot-2", 10.0, WALL + 9000.0)
    assert (now, epoch) == (WALL + 9000.0, Epoch("boot-2", WALL + 8990.0))


def test_without_a_boot_id_the_time_is_the_wall_clock() -> None:
    now, epoch = claim_time(None, "", WALL, WALL)
    assert (now, epoch) == (WALL, Epoch("", 0.0))
    assert claim_time(epoch, "", WALL + 5, WALL + 5) == (WALL + 5, epoch)


@given(st.text(min_size=1).filter(lambda t: " " not in t), st.floats(allow_nan=False))
def test_an_epoch_round_trips_through_its_text(boot: str, start: float) -> None:
    assert decode(Epoch(boot, start).encode()) == Epoch(boot, start)


def test_text_no_release_wrote_is_no_epoch() -> None:
    assert decode(None) is None
    assert decode("") is None
    assert decode("soon boot-1") is None
