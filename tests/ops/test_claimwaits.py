"""Waiting for a claim: granted as soon as it can be, in the queue's order, deadlocks broken,
runs out as busy, dead waiters dropped — and the timing of the looks between.

Waits run in threads; a test knows a waiter is queued when it blocks on its FIFO (the
``blocked`` fixture watches ``Inbox.block``), and wakes it by changing the lease table.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Busy, Claim, Memory
from memkeeper.claims.decisions import make_request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.clock import FakeClock
from memkeeper.fs import wakeups as waiting_module
from memkeeper.names import WAIT_DIR
from memkeeper.ops import claimwaits
from memkeeper.ops.claims import ClaimTable
from tests.ops.conftest import EXE, START, WHY, kinds

if TYPE_CHECKING:
    from tests.etcd_cluster import Cluster


class Blocked:
    """Which threads have blocked on their FIFO: each is queued and asleep."""

    def __init__(self) -> None:
        self.threads: set[int] = set()
        self.changed = threading.Condition()

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.threads) >= count, timeout=10)


@pytest.fixture
def blocked(monkeypatch: pytest.MonkeyPatch) -> Blocked:
    seen = Blocked()
    real_block = waiting_module.Inbox.block

    def block(inbox: waiting_module.Inbox, timeout: float) -> bool:
        with seen.changed:
            seen.threads.add(threading.get_ident())
            seen.changed.notify_all()
        return real_block(inbox, timeout)

    monkeypatch.setattr(waiting_module.Inbox, "block", block)
    return seen


class Background:
    """Run a call in a daemon thread; ``result()`` returns or raises what it did."""

    def __init__(self, call: Callable[[], Claim]) -> None:
        self.outcome: Claim | BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], Claim]) -> None:
        try:
            self.outcome = call()
        except BaseException as exc:
            self.outcome = exc

    def result(self) -> Claim:
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the waiter never came back"
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        assert self.outcome is not None
        return self.outcome


def test_a_waiter_is_granted_as_soon_as_the_holder_releases(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim("src/")
    waiter = Background(lambda: b.claim("src/x.py", wait=30))
    blocked.wait_for(1)
    assert a.metrics()["queue_depth"] == 1
    a.release(held.id)
    granted = waiter.result()
    assert (granted.agent, granted.token) == ("b", held.token + 1)
    assert a.metrics()["queue_depth"] == 0
    assert kinds(a)[-2:] == [("claim.released", "a", held.id), ("claim.granted", "b", granted.id)]


def test_the_holder_is_told_who_queued_behind_its_claim(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim("src/", strict=True)
    waiter = Background(lambda: b.claim("src/x.py", wait=30, objective="fix x"))
    blocked.wait_for(1)
    told = a.mail.deliver()[0]
    assert [(m.kind, m.sender, m.about) for m in told] == [("overlap", "b", told[0].about)]
    assert told[0].text.startswith(
        f"b waits for src/x.py (write, advisory) for: fix x, behind your claim {held.id} on src/"
    )
    a.release(held.id)
    waiter.result()
    assert a.mail.deliver() == ([], [])  # granted once a released: nothing more to tell


def test_an_expiry_noticed_by_anyone_grants_the_waiter(
    agents: Callable[[str], Memory], blocked: Blocked, clock: FakeClock
) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    held = a.claim("src/", ttl=5)
    waiter = Background(lambda: b.claim("src/", wait=60))
    blocked.wait_for(1)
    clock.advance(5)
    c.claims()
    assert waiter.result().agent == "b"
    assert ("claim.expired", "a", held.id) in kinds(a)


def test_a_wait_that_runs_out_is_busy_with_the_holders(
    agents: Callable[[str], Memory], blocked: Blocked, clock: FakeClock
) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    held = a.claim("src/", ttl=600)
    waiter = Background(lambda: b.claim("src/", wait=10))
    blocked.wait_for(1)
    clock.advance(11)
    poke_everyone(c)  # as the waiter's own timer does at its deadline
    with pytest.raises(Busy) as caught:
        waiter.result()
    assert caught.value.reason == "timeout"
    assert [h["id"] for h in caught.value.holders] == [held.id]
    assert c.metrics()["queue_depth"] == 0


def test_the_queue_serves_higher_priority_first(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, low, high = agents("a"), agents("low"), agents("high")
    held = a.claim("src/")
    first = Background(lambda: low.claim("src/", wait=30, priority=1))
    blocked.wait_for(1)
    second = Background(lambda: high.claim("src/", wait=30, priority=5))
    blocked.wait_for(2)
    a.release(held.id)
    winner = second.result()
    assert winner.agent == "high"
    assert first.thread.is_alive()
    high.release(winner.id)
    assert first.result().agent == "low"


def test_a_deadlock_aborts_the_lower_priority_waiter(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, b = agents("a"), agents("b")
    a.claim("src/a", priority=5)
    held_b = b.claim("src/b", priority=1)
    b_waits = Background(lambda: b.claim("src/a", wait=30, priority=1))
    blocked.wait_for(1)
    a_waits = Background(lambda: a.claim("src/b", wait=30, priority=5))
    with pytest.raises(Busy) as caught:
        b_waits.result()
    assert caught.value.reason == "deadlock"
    assert [h["agent"] for h in caught.value.holders] == ["a"]
    b.release(held_b.id)
    assert a_waits.result().targets == ("src/b",)
    aborted = [e for e in a.events() if e.type == "claim.aborted"]
    assert [(e.actor, e.data["reason"]) for e in aborted] == [("b", "deadlock")]
    assert a.metrics()["deadlocks_broken"] == 1


def test_a_new_request_that_closes_a_cycle_is_itself_the_victim_when_lower(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    low, high = agents("low"), agents("high")
    held_low = low.claim("x", priority=1)
    high.claim("y", priority=5)
    high_waits = Background(lambda: high.claim("x", wait=30, priority=5))
    blocked.wait_for(1)
    low_waits = Background(lambda: low.claim("y", wait=30, priority=1))
    with pytest.raises(Busy) as caught:
        low_waits.result()
    assert caught.value.reason == "deadlock"
    assert high_waits.thread.is_alive()
    low.release(held_low.id)
    assert high_waits.result().agent == "high"


def poke_everyone(memory: Memory) -> None:
    """A byte into every waiter's FIFO (no change of the table wakes a waiter it does not
    concern: this is its timer going off, on a clock the test moves)."""
    home = memory.workspace.home
    names = os.listdir(os.path.join(home, WAIT_DIR))
    waiting_module.notify(home, [n.removesuffix(".fifo") for n in names])


class Pokes:
    """The request ids each ``fs.wakeups.notify`` of this thread was given, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[list[str]] = []
        self.thread = threading.get_ident()
        notify = waiting_module.notify

        def spy(home: str, request_ids: Iterable[str]) -> None:
            ids = list(request_ids)
            if ids and threading.get_ident() == self.thread:
                self.calls.append(ids)
            notify(home, ids)

        monkeypatch.setattr(waiting_module, "notify", spy)


def test_a_release_wakes_the_waiter_it_grants_not_the_rest_of_the_queue(
    agents: Callable[[str], Memory], blocked: Blocked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: a change woke every waiter, and each ran a transaction to find it had
    nothing to do; now the one granted (and one that must time a sooner expiry) only."""
    a = agents("a")
    held = a.claim("src/", ttl=600)
    waiters = []
    for n in range(4):  # queued in this order
        agent = agents(f"w{n}")
        waiters.append(Background(functools.partial(agent.claim, "src/", wait=30, ttl=600)))
        blocked.wait_for(n + 1)
    queue = [w.request.id for w in ClaimTable(a.workspace).live()[1]]
    pokes = Pokes(monkeypatch)
    a.release(held.id)
    # w0 granted; w1 is at the front now, behind w0's claim of ten minutes: it looks again
    # by its cap anyway, and waking it (or w2, w3) would find nothing to do
    assert pokes.calls == [queue[:1]]
    assert all(w.thread.is_alive() for w in waiters[1:])
    for n, waiter in enumerate(waiters[:-1]):  # each release lets in the next, in order
        claim = waiter.result()
        agents(f"w{n}").release(claim.id)
    assert waiters[-1].result().id == queue[-1]


def test_a_release_between_a_waiters_look_and_its_sleep_is_not_missed(
    agents: Callable[[str], Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No lost wake-up: the waiter has looked (still held) and is about to block when the
    holder releases; its FIFO, made before its first look, keeps the poke for the block,
    which returns at once instead of at the cap (a minute here)."""
    monkeypatch.setattr(claimwaits, "WAKE_CAP_S", 60.0)
    a, b = agents("a"), agents("b")
    held = a.claim("src/", ttl=600)
    looked, released = threading.Event(), threading.Event()
    woken: list[bool] = []
    real_block = waiting_module.Inbox.block

    def block(inbox: waiting_module.Inbox, timeout: float) -> bool:
        if not looked.is_set():
            looked.set()  # between the look and the sleep: the holder releases now
            assert released.wait(10)
        woken.append(real_block(inbox, timeout))
        return woken[-1]

    monkeypatch.setattr(waiting_module.Inbox, "block", block)
    waiter = Background(lambda: b.claim("src/", wait=30))
    assert looked.wait(10)
    a.release(held.id)
    released.set()
    assert waiter.result().agent == "b"
    assert woken == [True]  # woken by the byte already there, not by the cap


def gone_pid() -> int:
    """A process id no process has: one past the kernel's largest."""
    with open("/proc/sys/kernel/pid_max", encoding="ascii") as handle:
        return int(handle.read()) + 1


def test_a_dead_waiters_request_is_dropped(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim("src/")
    request = make_request("c77", "ghost", ["src/"], ttl=60, arrival=77)
    with a.workspace.store.writing():
        a.workspace.store.put_waiter(WaiterRow(request, gone_pid(), START + 60, "waiting", None))
    a.release(held.id)
    assert b.claim("src/").agent == "b", "the ghost was not served first"
    aborted = [e for e in a.events() if e.type == "claim.aborted"]
    assert [(e.actor, e.data["reason"]) for e in aborted] == [("ghost", "abandoned")]


# --- the wait's timing, alone ------------------------------------------------------------------


def claim_expiring(at: float) -> Claim:
    from memkeeper.claims.decisions import grant

    return grant(make_request("c1", "a", ["x"], ttl=at - START, arrival=1), 1, START, 3600)


def test_a_waiter_looks_again_at_its_deadline_the_next_expiry_or_the_cap() -> None:
    slack = claimwaits._SLACK_S
    now = START
    assert claimwaits.next_look(now + 2, [], now, shared=False) == pytest.approx(2 + slack)
    held = [claim_expiring(now + 9), claim_expiring(now + 1)]
    assert claimwaits.next_look(now + 2, held, now, shared=False) == pytest.approx(1 + slack)
    cap = claimwaits.WAKE_CAP_S
    assert claimwaits.next_look(now + 60, [], now, shared=False) == pytest.approx(cap + slack)
    shared = claimwaits.SHARED_CAP_S  # etcd: its watch wakes the waiter, the cap a backstop
    assert claimwaits.next_look(now + 60, [], now, shared=True) == pytest.approx(shared + slack)


def test_on_etcd_a_claim_past_its_expiry_but_not_yet_ended_by_etcd_is_looked_at_often() -> None:
    slack, now = claimwaits._SLACK_S, START + 5
    overdue = [claim_expiring(START + 4), claim_expiring(START + 60)]
    poll = claimwaits.SHARED_POLL_S
    assert claimwaits.next_look(now + 60, overdue, now, shared=True) == pytest.approx(poll + slack)
    cap = claimwaits.WAKE_CAP_S  # the local store ended it at its expiry: nothing to poll
    assert claimwaits.next_look(now + 60, overdue, now, shared=False) == pytest.approx(cap + slack)


def test_a_wait_not_granted_was_a_deadlock_only_when_the_queue_says_so() -> None:
    request = make_request("c1", "a", ["x"], ttl=60, arrival=1)
    aborted = WaiterRow(request, os.getpid(), START, "aborted", "deadlock")
    assert claimwaits.busy_reason(aborted) == "deadlock"
    assert claimwaits.busy_reason(aborted._replace(reason="timeout")) == "timeout"
    assert claimwaits.busy_reason(None) == "timeout"


def test_a_wait_is_abandoned_when_far_past_its_deadline_or_its_process_is_gone() -> None:
    request = make_request("c1", "a", ["x"], ttl=60, arrival=1)
    mine = WaiterRow(request, os.getpid(), START + 60, "waiting", None)
    assert not claimwaits.abandoned(mine, START)
    assert not claimwaits.abandoned(mine, START + 60 + claimwaits.ABANDON_GRACE_S)
    assert claimwaits.abandoned(mine, START + 61 + claimwaits.ABANDON_GRACE_S)
    assert claimwaits.abandoned(mine._replace(pid=gone_pid()), START)


class Inbox:
    """An inbox that records how long each look blocked, and never sleeps."""

    def __init__(self) -> None:
        self.blocked: list[float] = []

    def block(self, timeout: float) -> bool:
        self.blocked.append(timeout)
        return False


def test_a_wait_blocks_between_looks_until_it_has_an_outcome() -> None:
    outcomes: list[Claim | float] = [2.0, 0.5, claim_expiring(START + 60)]
    inbox = Inbox()
    got = claimwaits.wait_for("c1", lambda: outcomes.pop(0), inbox, None)  # type: ignore[arg-type]
    assert isinstance(got, Claim)
    assert inbox.blocked == [2.0, 0.5]


def test_the_look_that_queued_the_request_is_the_waits_first() -> None:
    """The transaction that queued the request saw the table as it left it: the wait sleeps
    first, then looks (one transaction fewer per queued claim)."""
    outcomes: list[Claim | float] = [0.5, claim_expiring(START + 60)]
    inbox = Inbox()
    step = lambda: outcomes.pop(0)  # noqa: E731
    got = claimwaits.wait_for("c1", step, inbox, None, first=3.0)  # type: ignore[arg-type]
    assert isinstance(got, Claim)
    assert inbox.blocked == [3.0, 0.5]


def test_a_cancellable_wait_looks_at_its_flag_often_and_leaves_once_it_is_set() -> None:
    flag = threading.Event()
    looks = iter([30.0, 30.0])
    inbox = Inbox()

    def step() -> float:
        value = next(looks)
        if inbox.blocked:
            flag.set()
        return value

    with pytest.raises(claimwaits.WaitCancelled, match="c1: the wait was cancelled"):
        claimwaits.wait_for("c1", step, inbox, flag)  # type: ignore[arg-type]
    assert inbox.blocked == [claimwaits.CANCEL_POLL_S]


@pytest.mark.skipif(EXE is None, reason=WHY)
@pytest.mark.parametrize("step", [60.0, -60.0])
def test_a_wait_on_etcd_lasts_its_length_whatever_the_wall_clock_does_meanwhile(
    sample: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    blocked: Blocked,
    step: float,
) -> None:
    """Issue 22: with a shared store a wait's deadline was its process's wall clock — a step
    of a minute ended a 10 s wait at once (and another process a minute ahead dropped it as
    abandoned), or made it last 70 s. Now the waiter counts its wait on the uptime, and no
    other process judges its deadline (etcd's lease on its row does)."""
    cluster: Cluster = request.getfixturevalue("cluster")
    for name, value in cluster.store_env(f"waits{int(step)}").items():
        monkeypatch.setenv(name, value)
    clock = FakeClock(START)
    a = Memory.open(sample, agent="a", clock=clock)
    b = Memory.open(sample, agent="b", clock=clock)
    held = a.claim("src/", ttl=600)
    waiter = Background(lambda: b.claim("src/", wait=10))
    blocked.wait_for(1)
    clock.set(clock.now() + step)  # NTP, or a user, steps the wall clock of both
    if step > 0:
        assert [c.id for c in a.claims()] == [held.id]  # a sweep by the clock ahead
        a.release(held.id)
        assert waiter.result().agent == "b"  # before: busy (timeout) at once
    else:
        clock.advance(10.5)
        with pytest.raises(Busy) as caught:  # before: still waiting, a minute more
            waiter.result()
        assert caught.value.reason == "timeout"
    a.close()
    b.close()


@pytest.mark.skipif(EXE is None, reason=WHY)
def test_on_etcd_a_release_on_another_machine_wakes_the_waiter_through_its_watch(
    sample: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    blocked: Blocked,
) -> None:
    """Issue 25's leftover: a waiter saw a release made on another machine only at its
    0.1 s poll. Two roots with their own state directories (no FIFO crosses) on one etcd
    prefix; the backstop a minute long: only the watch on the wake key can wake it."""
    monkeypatch.setattr(claimwaits, "SHARED_CAP_S", 60.0)
    cluster: Cluster = request.getfixturevalue("cluster")
    for name, value in cluster.store_env("wakes-across").items():
        monkeypatch.setenv(name, value)
    there = tmp_path / "there"
    shutil.copytree(sample, there, symlinks=True)
    holder, waiting = Memory.open(there, agent="a"), Memory.open(sample, agent="b")
    held = holder.claim("src/", ttl=600)
    waiter = Background(lambda: waiting.claim("src/", wait=30))
    blocked.wait_for(1)
    released = time.monotonic()
    holder.release(held.id)
    assert waiter.result().agent == "b"
    assert time.monotonic() - released < 5.0  # not the minute's backstop
    holder.close()
    waiting.close()
