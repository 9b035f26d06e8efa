"""A ``serialize`` resolution as a hand-over the store keeps (docs/reference.md §4.32): the
participants take the contested targets in turn, in the meeting's ``order``. Pure: given the
meeting, the live claims and the time, what happens next.

While the participant whose turn it is holds a live claim on any contested target, nothing
happens. Once it holds none (released, completed, abandoned, expired, narrowed away), the
turn passes to the next participant still there — one whose claims at the resolution
(``standing``) all ended has left, and is skipped with its reason — and it is granted the
contested targets, unless another agent's claim stands in the way (then nothing happens
until it goes). The hand-over to the last one, or the skip of everyone left, resolves the
meeting. One holder at a time; the order kept; every participant has its turn or is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memkeeper.claims.targets import any_overlap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.meetings.records import Meeting

LEFT = "left"  # a participant whose claims at the resolution all ended before its turn


@dataclass(frozen=True, slots=True)
class Turn:
    """What to do: ``meeting`` is the meeting afterwards (its ``rev`` one higher), ``to`` the
    participant to grant the contested targets (None: none, everyone left was skipped),
    ``skipped`` who was passed over now and why."""

    meeting: Meeting
    to: str | None
    skipped: tuple[tuple[str, str], ...]


def holds(m: Meeting, agent: str, live: Iterable[Claim]) -> bool:
    """Whether ``agent`` holds a live claim on any of ``m``'s contested targets."""
    return any(c.agent == agent and _on(m, c) for c in live)


def in_way(m: Meeting, agent: str, live: Iterable[Claim]) -> list[Claim]:
    """The live claims of other agents on a contested target: a grant to ``agent`` waits."""
    return [c for c in live if c.agent != agent and _on(m, c)]


def next_turn(m: Meeting, live: Sequence[Claim], now: float) -> Turn | None:
    """The hand-over due now, or None (not serializing, the holder still holds, or another's
    claim is in the way of the next one)."""
    if m.state != "serializing" or holds(m, m.order[m.turn], live):
        return None
    ids = {c.id for c in live}
    skipped: list[tuple[str, str]] = []
    for n in range(m.turn + 1, len(m.order)):
        agent = m.order[n]
        had = m.standing_of(agent)
        if had and not ids.intersection(had):
            skipped.append((agent, f"{LEFT}: its claims {', '.join(had)} ended"))
            continue
        if in_way(m, agent, live):
            return None
        last = n == len(m.order) - 1
        return Turn(_after(m, n, skipped, now, last), agent, tuple(skipped))
    return Turn(_after(m, len(m.order), skipped, now, True), None, tuple(skipped))


def _after(
    m: Meeting, turn: int, skipped: list[tuple[str, str]], now: float, last: bool
) -> Meeting:
    done = (*m.skipped, *skipped)
    if not last:
        return replace(m, rev=m.rev + 1, turn=turn, skipped=done)
    return replace(m, rev=m.rev + 1, turn=turn, skipped=done, state="resolved", settled_at=now)


def _on(m: Meeting, c: Claim) -> bool:
    return any_overlap(c.targets, m.targets)
