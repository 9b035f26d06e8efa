"""The watchdog's rule (docs/reference.md §4.18): when a live claim is idle, when it is active
again, when an idle one is released, and when to look next. Pure: the daemon gathers the
facts (``daemon.watchdog``) — when each claim last moved on the ground — and does what this
decides.

A claim moves when a file under its targets changes (by anyone), when its branch or its
worktree's ``HEAD`` gets a commit, or when its holder writes through memkeeper (``is_work``).
A renewal is not movement: it says the holder is alive, not that the work goes on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.records import Event

MAX_CHECK_S = 60.0  # the watchdog looks at least this often, and every quarter of idle_after
# The holder's events that are no work: liveness (a renewal), taking in what it was told, a
# render of the generated pages (a daemon's, whoever it runs as), the watchdog's own marks.
NOT_WORK = frozenset(
    {
        "claim.renewed",
        "message.delivered",
        "message.acked",
        "region.regenerated",
        "claim.idle",
        "claim.active",
    }
)

Verdict = Literal["none", "idle", "active", "release"]


@dataclass(frozen=True, slots=True)
class IdleRule:
    """The policy's ``leases.idle_after`` and ``leases.idle_release_after``, seconds (0: off)."""

    idle_after: float
    release_after: float = 0.0

    @property
    def on(self) -> bool:
        return self.idle_after > 0

    @property
    def check_s(self) -> float:
        """The longest the watchdog waits between two looks."""
        return min(self.idle_after / 4, MAX_CHECK_S)


@dataclass(frozen=True, slots=True)
class Watched:
    """What the watchdog knows of one live claim, on the claims' clock: when it last moved
    (its grant counts), and since when it is marked idle (None: it is not)."""

    claim_id: str
    moved_at: float
    idle_since: float | None = None


def judge(w: Watched, now: float, rule: IdleRule) -> Verdict:
    """What to do with one live claim now: mark it ``idle`` (no movement for ``idle_after``),
    mark it ``active`` again (it moved since it was marked, or at that moment), ``release``
    it (idle for ``release_after`` since it was marked, where that is on), or nothing."""
    if not rule.on:
        return "none"
    if w.idle_since is not None:
        if w.moved_at >= w.idle_since:
            return "active"
        if rule.release_after > 0 and now - w.idle_since >= rule.release_after:
            return "release"
        return "none"
    return "idle" if now - w.moved_at >= rule.idle_after else "none"


def next_look(watched: Iterable[Watched], now: float, rule: IdleRule) -> float:
    """When to look again: at the next moment a verdict could change (a claim reaching
    ``idle_after``, an idle one reaching ``release_after``), and at most ``check_s`` from now
    (movement is gathered then). ``inf`` when the watchdog is off."""
    if not rule.on:
        return float("inf")
    due = now + rule.check_s
    for w in watched:
        if w.idle_since is None:
            due = min(due, w.moved_at + rule.idle_after)
        elif rule.release_after > 0:
            due = min(due, w.idle_since + rule.release_after)
    return max(due, now)


def is_work(event: Event, holder: str) -> bool:
    """Whether ``event`` is the holder writing through memkeeper (a patch, an append, an emit,
    a message it sent, a change to its claims but a renewal…)."""
    return event.actor == holder and event.type not in NOT_WORK


def moved(*times: float | None) -> float:
    """The last of these movement times (``None``: none of that kind)."""
    return max(t for t in times if t is not None)


def minutes(seconds: float) -> str:
    """``20 min``, ``90 s``: how long, as a person says it."""
    return f"{seconds / 60:g} min" if seconds >= 120 else f"{seconds:.0f} s"


def idle_text(claim_id: str, targets: Iterable[str], quiet_s: float) -> str:
    """The message its holder gets when a claim goes idle."""
    on = ", ".join(targets)
    return (
        f"your claim {claim_id} on {on} has seen no change for {minutes(quiet_s)} (no file "
        "under it changed, no commit on its branch, nothing written through memkeeper): "
        f"release it (memkeeper release {claim_id}), go on with the work — a renewal alone "
        f"is no progress —, or say so (memkeeper send --to all --about {claim_id} --text …)"
    )


def released_text(claim_id: str, targets: Iterable[str], idle_s: float) -> str:
    """The message its holder gets when the watchdog releases an idle claim."""
    return (
        f"your claim {claim_id} on {', '.join(targets)} was released: idle for "
        f"{minutes(idle_s)} after you were told (leases.idle_release_after) — claim the "
        "targets again if you still work on them"
    )


def target_path(target: str) -> str:
    """The path part of a claim target: a change to a section's file is movement of it."""
    return target.partition("#")[0] or target


def literal_base(target: str) -> str:
    """The directory or file a target names before its first wildcard (``""``: the root):
    what the watchdog watches for it."""
    parts = target_path(target).rstrip("/").split("/")
    kept = []
    for part in parts:
        if any(c in part for c in "*?["):
            break
        kept.append(part)
    return "/".join(kept)
