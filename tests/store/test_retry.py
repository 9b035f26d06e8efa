"""What ``StoreRetry`` promises: it is no ``MemkeeperError`` (no handler of memkeeper's own
errors takes it for a failure to report), it is the very class the etcd store raises, and the
loop it is meant for — ``Workspace.again`` — runs the whole operation again on it, gives up as
``store_busy``, and lets every other error through at once; then ``Retry``, the policy every
retrying loop follows: its attempts, its back-off (paused through an injected sleep), what it
retries on and how it gives up. That its module loads no etcd client (the SQLite path imports
it) and a read's retries no ``random`` nor threads: tests/e2e/test_startup_imports.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.errors import EnvironmentFailure, MemkeeperError
from memkeeper.ops.workspace import Workspace
from memkeeper.store import etcd
from memkeeper.store import retry as retrying
from memkeeper.store.errors import StoreUnavailable
from memkeeper.store.retry import Retry, StoreRetry


def test_a_store_retry_is_no_memkeeper_error() -> None:
    assert issubclass(StoreRetry, Exception)
    assert not issubclass(StoreRetry, MemkeeperError)  # the CLI boundary's expected errors


def test_the_etcd_store_raises_the_class_the_local_path_catches() -> None:
    assert etcd.StoreRetry is StoreRetry
    assert "StoreRetry" in etcd.__all__


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path, "agent-a")  # opens no store: ``again`` needs none


def test_again_runs_the_whole_operation_until_it_is_not_asked_to(ws: Workspace) -> None:
    calls: list[int] = []

    def operation() -> str:
        calls.append(len(calls))
        if len(calls) < 3:
            raise StoreRetry("another writer got in first")
        return "done"

    assert ws.again(operation) == "done"
    assert calls == [0, 1, 2]


def test_again_gives_up_as_store_busy_after_its_attempts(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retrying, "STORE_ATTEMPTS", 4)
    calls: list[int] = []

    def always_beaten() -> None:
        calls.append(1)
        raise StoreRetry("another writer got in first")

    with pytest.raises(EnvironmentFailure) as caught:
        ws.again(always_beaten)
    assert len(calls) == 4
    assert caught.value.fields["reason"] == "store_busy"
    assert "nothing was changed" in caught.value.message
    assert caught.value.__suppress_context__  # no StoreRetry traceback in the report


def test_again_lets_any_other_error_through_at_once(ws: Workspace) -> None:
    calls: list[int] = []

    def fails() -> None:
        calls.append(1)
        raise EnvironmentFailure("the disk is full")

    with pytest.raises(EnvironmentFailure, match="the disk is full"):
        ws.again(fails)
    assert calls == [1]


# -- a leader election: the store asks again, nobody got in first ---------------------------------


def failing_over(times: int, calls: list[int]) -> Callable[[], str]:
    """Work the store makes run again ``times`` times (a commit unanswered, handed on to
    another member), then succeeds."""

    def work() -> str:
        calls.append(len(calls))
        if len(calls) <= times:
            raise StoreRetry("a commit no member answered did not land", lost=False)
        return "done"

    return work


def test_again_outlasts_an_election_that_asks_more_often_than_its_bound_on_lost_races() -> None:
    """Issue 22 (a flaky fleet test): a worker gave up as ``store_busy`` ("50 other writers
    got in first") while the cluster elected a leader. A retry the store asked for spends
    none of the bound on lost races; those are bounded by ``STORE_PATIENCE_S`` instead."""
    clock, calls = Clock(), list[int]()
    retry = retrying.store_retry(sleep=clock.sleep, clock=clock)
    assert retry(failing_over(retrying.STORE_ATTEMPTS + 10, calls)) == "done"
    assert len(calls) == retrying.STORE_ATTEMPTS + 11


def test_a_store_that_keeps_failing_over_is_unavailable_after_the_patience() -> None:
    clock, calls = Clock(), list[int]()
    with pytest.raises(StoreUnavailable) as caught:
        retrying.store_retry(sleep=clock.sleep, clock=clock)(failing_over(10**6, calls))
    assert clock.now <= retrying.STORE_PATIENCE_S
    assert caught.value.fields["outcome"] == "unknown"  # a commit handed on may have landed
    assert "nothing was changed" not in caught.value.message


def test_lost_races_pause_longer_in_all_than_an_election_lasts() -> None:
    """Writers that all come back when a new leader answers (1 to 3 s after the old one was
    lost) must not use their bound up on each other before it does: the pauses between the
    ``STORE_ATTEMPTS`` lost races add up to several seconds (before: ~1 s, 2.5 s at most)."""
    clock, calls = Clock(), list[int]()
    with pytest.raises(EnvironmentFailure) as caught:
        retrying.store_retry(sleep=clock.sleep, clock=clock)(beaten(10**6, calls))
    assert caught.value.fields["reason"] == "store_busy"
    assert len(calls) == retrying.STORE_ATTEMPTS
    assert 4.0 < clock.now < retrying.STORE_PATIENCE_S
    assert all(p <= 0.002 * 2**n for n, p in enumerate(clock.slept[:8]))  # the first: short


def test_a_failure_that_spends_no_attempt_is_bounded_by_the_deadline_alone() -> None:
    clock, calls = Clock(), list[int]()
    retry = policy(2, clock, delay=1.0, backoff=1.0, deadline=5.5, spends=lambda _: False)
    with pytest.raises(StoreRetry):
        retry(beaten(100, calls))
    assert calls == [0, 1, 2, 3, 4, 5]  # 2 attempts would have stopped at [0, 1]
    with pytest.raises(ValueError, match="needs a deadline"):
        Retry(2, spends=lambda _: False)


# -- the policy ----------------------------------------------------------------------------------


class Clock:
    """A clock that moves only when the policy sleeps: pauses cost no time in a test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def policy(attempts: int, clock: Clock, **options: Any) -> Retry:
    return Retry(attempts, sleep=clock.sleep, clock=clock, **options)


def beaten(times: int, calls: list[int]) -> Callable[[], str]:
    """Work that loses ``times`` times to another writer, then succeeds."""

    def work() -> str:
        calls.append(len(calls))
        if len(calls) <= times:
            raise StoreRetry("another writer got in first")
        return "done"

    return work


def test_a_policy_attempts_again_on_what_it_retries_on_until_one_succeeds() -> None:
    clock, calls = Clock(), list[int]()
    assert policy(5, clock)(beaten(3, calls)) == "done"
    assert calls == [0, 1, 2, 3]
    assert clock.slept == []  # no delay: no pause


def test_the_pauses_back_off_exponentially_up_to_the_longest() -> None:
    clock, calls = Clock(), list[int]()
    retry = policy(6, clock, delay=0.01, max_delay=0.05)
    assert retry(beaten(5, calls)) == "done"
    assert clock.slept == pytest.approx([0.01, 0.02, 0.04, 0.05, 0.05])


def test_a_constant_and_a_linear_back_off() -> None:
    assert [Retry(9, delay=0.2, backoff=1.0).pause(n) for n in range(3)] == [0.2, 0.2, 0.2]
    linear = Retry(9, delay=0.01, backoff=1.0, step=0.01)
    assert [linear.pause(n) for n in range(4)] == pytest.approx([0.01, 0.02, 0.03, 0.04])


def test_a_jittered_pause_lies_between_nothing_and_the_back_off() -> None:
    retry = Retry(9, delay=0.002, max_delay=0.128, jitter=True)
    for attempt in range(12):
        pauses = [retry.pause(attempt) for _ in range(50)]
        assert all(0.0 <= p <= min(0.002 * 2**attempt, 0.128) for p in pauses)
        assert len(set(pauses)) > 1  # random, not the bound itself


def test_a_policy_gives_up_after_its_attempts_with_the_error_it_names() -> None:
    clock, calls = Clock(), list[int]()
    retry = policy(3, clock, delay=1.0, give_up=lambda last: EnvironmentFailure(f"lost: {last}"))
    with pytest.raises(EnvironmentFailure, match="lost: another writer got in first") as caught:
        retry(beaten(10, calls))
    assert calls == [0, 1, 2]
    assert clock.slept == [1.0, 2.0]  # none after the last attempt
    assert caught.value.__suppress_context__


def test_without_a_give_up_the_last_error_goes_through() -> None:
    calls: list[int] = []
    with pytest.raises(StoreRetry, match="another writer"):
        policy(2, Clock())(beaten(10, calls))
    assert calls == [0, 1]


def test_any_other_error_goes_through_at_once() -> None:
    calls: list[int] = []

    def fails() -> None:
        calls.append(1)
        raise EnvironmentFailure("the disk is full")

    with pytest.raises(EnvironmentFailure, match="the disk is full"):
        policy(5, Clock())(fails)
    assert calls == [1]


def test_what_it_retries_on_is_the_policys_to_say() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise TimeoutError("not yet")
        return "up"

    assert policy(3, Clock(), on=(TimeoutError,))(flaky) == "up"
    calls.clear()
    with pytest.raises(TimeoutError):
        policy(3, Clock())(flaky)  # StoreRetry only, by default: the first timeout goes through
    assert calls == [1]


def test_the_work_gets_its_arguments() -> None:
    assert policy(1, Clock())(lambda a, b: a + b, 2, 3) == 5


def test_no_attempt_starts_past_the_deadline() -> None:
    clock, calls = Clock(), list[int]()
    retry = policy(100, clock, delay=1.0, backoff=1.0, deadline=3.5)
    with pytest.raises(StoreRetry):
        retry(beaten(100, calls))
    assert calls == [0, 1, 2, 3]  # at 0, 1, 2 and 3 s: the next would start at 4
    assert clock.slept == [1.0, 1.0, 1.0]


def test_tries_counts_the_attempts_of_a_loop_that_checks_a_result() -> None:
    clock = Clock()
    seen = list(policy(4, clock, delay=0.5, backoff=1.0).tries())
    assert seen == [0, 1, 2, 3]
    assert clock.slept == [0.5, 0.5, 0.5]
    found = None
    for attempt in policy(10, clock).tries():
        if attempt == 2:
            found = attempt
            break
    assert found == 2


def test_a_policy_needs_one_attempt_at_least() -> None:
    with pytest.raises(ValueError, match="at least one attempt"):
        Retry(0)
