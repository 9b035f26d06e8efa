"""The one seam for time: claims, TTLs and event timestamps read a ``Clock``, never ``time``.

A clock tells two times: the wall clock (``now``: events, what people read) and how long
the machine has been up (``since_boot``: what claims expire by on one machine, reference
§4 "Expiry"). The wall clock can be stepped — by NTP, by hand, or for one process by
libfaketime's ``LD_PRELOAD`` — and so can every clock a process asks libc for; the uptime
``/proc/uptime`` reports (``CLOCK_BOOTTIME``: suspend included) cannot, by any process.

Hot path (a patch and a hook ask the uptime): ``Clock`` is a ``Protocol`` for the type checker
and a plain class at run time, so this module imports nothing but ``os`` and ``time``.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object

BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"
UPTIME_FILE = "/proc/uptime"


class Clock(Protocol):
    """Anything that tells the time as seconds since the epoch, UTC, and the machine's uptime."""

    def now(self) -> float: ...

    def since_boot(self) -> tuple[str, float]:
        """This boot's id and the seconds since it, suspend included; ``("", now())`` where
        the system tells neither."""
        ...


class SystemClock:
    """The production clock: the wall clock of this machine, and its uptime from the kernel."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()

    def since_boot(self) -> tuple[str, float]:
        boot = _boot_id()
        if boot:
            try:
                fd = os.open(UPTIME_FILE, os.O_RDONLY)
                try:
                    return boot, float(os.read(fd, 64).split()[0])
                finally:
                    os.close(fd)
            except (OSError, ValueError, IndexError):
                pass
        return "", time.time()  # no Linux /proc: the wall clock, as before uptimes were kept


_BOOT: list[str] = []  # this boot's id, read once a process


def _boot_id() -> str:
    if not _BOOT:
        try:
            # Bytes, decoded: a text file's ascii codec would be one more module to load.
            with open(BOOT_ID_FILE, "rb") as handle:
                _BOOT.append(handle.read().decode("ascii").strip())
        except OSError:
            _BOOT.append("")
    return _BOOT[0]


class FakeClock:
    """A clock that moves only when told to, for tests and simulations: ``advance`` is time
    passing (both times move), ``set`` a step of the wall clock alone, ``reboot`` a new boot."""

    __slots__ = ("_now", "_uptime", "_boot", "_boots")

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = float(start)
        self._uptime = 0.0
        self._boots = 1
        self._boot = "fake-boot-1"

    def now(self) -> float:
        return self._now

    def since_boot(self) -> tuple[str, float]:
        return self._boot, self._uptime

    def set(self, when: float) -> None:
        """Step the wall clock to ``when``, even backwards (the uptime does not move)."""
        self._now = float(when)

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (not negative) and return the new time."""
        if seconds < 0:
            raise ValueError(f"FakeClock cannot advance by a negative {seconds}")
        self._now += seconds
        self._uptime += seconds
        return self._now

    def reboot(self, down: float = 0.0) -> None:
        """The machine boots again after ``down`` seconds: a new boot id, the uptime from 0."""
        self._boots += 1
        self._boot = f"fake-boot-{self._boots}"
        self._uptime = 0.0
        self._now += down
