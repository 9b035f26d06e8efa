"""The one seam for time: claims, TTLs and event timestamps read a ``Clock``, never ``time``.

Hot path: runtime imports stay in the cheap stdlib set (``typing`` is needed for ``Protocol``).
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Anything that tells the time as seconds since the epoch, UTC."""

    def now(self) -> float: ...


class SystemClock:
    """The production clock: the wall clock of this machine."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()


class FakeClock:
    """A clock that moves only when told to, for tests and simulations."""

    __slots__ = ("_now",)

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def set(self, when: float) -> None:
        """Jump to ``when``, even backwards: a wall clock can be stepped back too."""
        self._now = float(when)

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (not negative) and return the new time."""
        if seconds < 0:
            raise ValueError(f"FakeClock cannot advance by a negative {seconds}")
        self._now += seconds
        return self._now
