"""Which member a watch asks next whether it is alive (pure).

A frozen member (SIGSTOP, swapping, a partition that keeps its socket open) keeps a watch's
stream open and sends nothing; an idle stream sends nothing either. So the watch asks: its
stream's member once the stream was quiet ``STREAM_S``, every other member every
``OTHERS_S`` (so that the commands, which read the memory of silent members, skip one the
moment it goes silent), a member that did not answer every ``SILENT_S`` (to notice it is
back). A member that answered nothing within ``ANSWER_S`` is silent: a stream on it moves to
another. Times are the watch's clock's (monotonic seconds).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# The stream's member, quiet this long, is asked (detection: this + ANSWER_S + a tick).
STREAM_S = 0.2
# Every other member is asked this often; one that did not answer, this often.
OTHERS_S, SILENT_S = 1.0, 5.0
# How long an answer is waited for (a healthy member answers in a few milliseconds).
ANSWER_S = 0.3

NEVER = float("-inf")


@dataclass(frozen=True, slots=True)
class Liveness:
    """Per member (by index): when it last answered, when it was last asked, and which did
    not answer the last time they were asked."""

    heard: tuple[float, ...]
    asked: tuple[float, ...]
    silent: frozenset[int] = frozenset()

    @classmethod
    def of(cls, members: int) -> Liveness:
        return cls((NEVER,) * members, (NEVER,) * members)


def due(live: Liveness, stream: int | None, now: float) -> int | None:
    """The member to ask now (None: none): the stream's first, then the one asked longest
    ago of those due."""
    if stream is not None:
        quiet = now - max(live.heard[stream], live.asked[stream])
        if quiet >= STREAM_S:
            return stream
    waiting = [
        i
        for i in range(len(live.heard))
        if i != stream and now - live.asked[i] >= (SILENT_S if i in live.silent else OTHERS_S)
    ]
    return min(waiting, key=lambda i: live.asked[i], default=None)


def asked(live: Liveness, member: int, now: float) -> Liveness:
    return replace(live, asked=_set(live.asked, member, now))


def answered(live: Liveness, member: int, now: float) -> Liveness:
    """The member answered (a probe, or its stream sent something)."""
    return replace(live, heard=_set(live.heard, member, now), silent=live.silent - {member})


def unanswered(live: Liveness, member: int) -> Liveness:
    return replace(live, silent=live.silent | {member})


def ranked(live: Liveness, order: list[int]) -> list[int]:
    """``order`` with the members that did not answer last moved to its end."""
    return [i for i in order if i not in live.silent] + [i for i in order if i in live.silent]


def _set(values: tuple[float, ...], index: int, value: float) -> tuple[float, ...]:
    return (*values[:index], value, *values[index + 1 :])
