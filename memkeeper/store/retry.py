"""Retrying: ``StoreRetry``, a shared store's request to run a whole operation again, and
``Retry``, the one policy every loop that tries again follows — how many attempts, the pause
between two (back-off, with jitter), what it retries on and what it raises once it gives up.

Its own module, importing nothing that is not already loaded, so that the SQLite path (and
a ``read``) can use both without importing the etcd client. The pauses go through an
injectable ``sleep`` and the deadline through an injectable ``clock``, so that tests run a
policy without waiting (as kazoo's ``KazooRetry``).
"""

from __future__ import annotations

import time

from memkeeper.errors import EnvironmentFailure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, TypeVar

    T = TypeVar("T")


class StoreRetry(Exception):
    """What a ``writing()`` block read was changed by another writer before the block
    committed; nothing of the block was applied: run the whole operation again.

    Not an ``EnvironmentFailure`` (nor any ``MemkeeperError``): it is no failure to report but
    a request to start over, to be caught by the retry loop around the operation
    (``Workspace.again``); one that escaped it would show up as a bug, not as a misleading
    "environment" error.

    ``lost``: another writer got in first (a lost race: the loop's bound on them counts it).
    False when nobody did and the store itself made the block run again — a commit no member
    answered that did not land, a commit sent again to another member during a leader
    election, a snapshot compacted meanwhile: that is the store failing over, not contention,
    and the loop's deadline bounds it, not its count of lost races."""

    def __init__(self, message: str, *, lost: bool = True) -> None:
        super().__init__(message)
        self.lost = lost


class Retry:
    """Up to ``attempts`` attempts; after the attempt numbered ``n`` (from 0) fails, a pause of
    ``min(delay * backoff**n + step * n, max_delay)`` seconds — exponential (``backoff`` 2),
    constant (``backoff`` 1) or linear (``backoff`` 1 and a ``step``) — or, with ``jitter``,
    a random one between 0 and that. ``on``: the exceptions that call for another attempt
    (any other goes through at once). ``deadline``: seconds after the first attempt past which
    no other starts. ``spends``: whether a failed attempt's exception spends one of the
    ``attempts`` (None: every one does); one that does not is tried again within the
    ``deadline`` alone, which such a policy must have. ``give_up``: what to raise once no
    attempt is left, made from the last exception (raised ``from None``); None: the last
    exception itself."""

    __slots__ = (
        "attempts", "on", "delay", "backoff", "step", "max_delay", "jitter", "deadline",
        "give_up", "sleep", "clock", "spends",
    )  # fmt: skip

    def __init__(
        self,
        attempts: int,
        *,
        on: tuple[type[BaseException], ...] = (StoreRetry,),
        delay: float = 0.0,
        backoff: float = 2.0,
        step: float = 0.0,
        max_delay: float = float("inf"),
        jitter: bool = False,
        deadline: float | None = None,
        give_up: Callable[[BaseException], BaseException] | None = None,
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        spends: Callable[[BaseException], bool] | None = None,
    ) -> None:
        if attempts < 1:
            raise ValueError(f"a retry policy needs at least one attempt, not {attempts}")
        if spends is not None and deadline is None:
            raise ValueError("a retry policy whose failures may spend no attempt needs a deadline")
        self.attempts = attempts
        self.on = on
        self.delay, self.backoff, self.step, self.max_delay = delay, backoff, step, max_delay
        self.jitter = jitter
        self.deadline = deadline
        self.give_up = give_up
        self.sleep = sleep
        self.clock = clock
        self.spends = spends

    def pause(self, attempt: int) -> float:
        """The pause after the attempt numbered ``attempt`` (from 0) failed."""
        longest = min(self.delay * self.backoff**attempt + self.step * attempt, self.max_delay)
        if not self.jitter or longest <= 0:
            return max(longest, 0.0)
        import random  # only a jittered policy needs it (a read's start-up does not)

        return random.uniform(0.0, longest)

    def tries(self) -> Iterator[int]:
        """The attempts' numbers, from 0, pausing before each but the first: for a loop that
        tries again on what an attempt found rather than on an exception. It stops after the
        last attempt, or once the next would start past the deadline; the loop then falls
        through to whatever it does when every attempt failed."""
        start = self.clock()
        for attempt in range(self.attempts):
            if attempt:
                wait = self.pause(attempt - 1)
                if self.deadline is not None and self.clock() - start + wait > self.deadline:
                    return
                if wait > 0:
                    self.sleep(wait)
            yield attempt

    def __call__(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)``, attempted again while it raises one of ``on``; once no attempt is
        left (or the next would start past the deadline), ``give_up``'s exception (or the
        last one). The pauses grow with every failed attempt, spent or not."""
        start, spent, failed = self.clock(), 0, 0
        while True:
            try:
                return work(*args)
            except self.on as exc:
                last = exc
            spent += self.spends is None or bool(self.spends(last))
            if spent >= self.attempts:
                break
            wait = self.pause(failed)
            failed += 1
            if self.deadline is not None and self.clock() - start + wait > self.deadline:
                break
            if wait > 0:
                self.sleep(wait)
        if self.give_up is None:
            raise last
        raise self.give_up(last) from None


STORE_ATTEMPTS = 50  # operations started over when a shared store's writer got in first
# How long an operation is started over while the shared store itself asks for it (a leader
# election: a commit unanswered, or handed on to another member), lost races or not.
STORE_PATIENCE_S = 30.0


def store_retry(
    sleep: Callable[[float], object] = time.sleep, clock: Callable[[], float] = time.monotonic
) -> Retry:
    """The policy of ``Workspace.again`` (an operation on the store, run again while a
    shared store asks for it). Lost races (``StoreRetry.lost``) spend its
    ``STORE_ATTEMPTS``, paused from 2 ms doubling to 0.4 s, jittered: ~8 s for all of
    them, longer than an etcd election, so that writers that all come back when a new leader
    answers do not use them up on each other in a second. A block the store made run again
    (a failover) spends none: those are bounded by ``STORE_PATIENCE_S``."""
    return Retry(
        STORE_ATTEMPTS,
        delay=0.002,
        max_delay=0.4,
        jitter=True,
        deadline=STORE_PATIENCE_S,
        spends=lambda exc: getattr(exc, "lost", True),
        give_up=_gave_up,
        sleep=sleep,
        clock=clock,
    )


def _gave_up(last: BaseException) -> EnvironmentFailure:
    if getattr(last, "lost", True):
        return EnvironmentFailure(
            f"the shared store: other writers got in first, {STORE_ATTEMPTS} times or for "
            f"{STORE_PATIENCE_S:.0f} s — nothing was changed; try again",
            reason="store_busy",
        )
    from memkeeper.store.errors import StoreUnavailable

    return StoreUnavailable(
        f"the shared store kept failing over for {STORE_PATIENCE_S:.0f} s (its leader lost, "
        f"commits unanswered: {last}) — read what you changed (or `memkeeper events`) before "
        "trying again; check the etcd cluster (MEMKEEPER_STORE) and the network",
        outcome="unknown",
    )
