"""The claims' clock on one machine (docs/reference.md §4 "Expiry"), pure.

Claims in the local store expire by the machine's uptime, which no process can step, not by
each process's wall clock (a process 60 s ahead would take a live claim for an expired one).
Times stay seconds since the epoch, as people read them: the store keeps one ``Epoch`` per
boot — the wall clock minus the uptime, as the first process of the boot to look saw them —
and every process of that boot reads the claims' time as its start plus the uptime: one clock
for all of them, however each one's wall clock is set.

A store from an earlier boot (the machine restarted): every process that held or waited for
a claim is gone, so every claim and every wait of that boot ends at the first look of the new
one (the store rewrites their expiry and deadline to that moment). Without a boot id (no
Linux ``/proc``) the uptime is the wall clock and the epoch 0: each process's wall clock, as
before.
"""

from __future__ import annotations

from memkeeper.records import Record

EPOCH_KEY = "claims:epoch"  # the store's cache key of the boot's epoch


class Epoch(Record):
    """A boot (``boot``: its id) and the claims' time at its uptime 0 (``start``)."""

    __slots__ = ("boot", "start")
    boot: str
    start: float

    def __init__(self, boot: str, start: float) -> None:
        self._fill(boot, start)

    def encode(self) -> str:
        return f"{self.start!r} {self.boot}"


def decode(text: str | None) -> Epoch | None:
    """``Epoch.encode`` undone; None for none (or for text no release wrote)."""
    if not text:
        return None
    start, _, boot = text.partition(" ")
    try:
        return Epoch(boot, float(start))
    except ValueError:
        return None


def claim_time(kept: Epoch | None, boot: str, uptime: float, wall: float) -> tuple[float, Epoch]:
    """The claims' time now, and the epoch it counts from: ``kept`` while the machine is in
    the boot it names, else a new one starting at ``wall - uptime`` (a different epoch than
    ``kept``: the caller stores it, and ends the claims of ``kept``'s boot)."""
    if kept is not None and kept.boot == boot:
        return kept.start + uptime, kept
    start = 0.0 if not boot else wall - uptime
    return start + uptime, Epoch(boot, start)
