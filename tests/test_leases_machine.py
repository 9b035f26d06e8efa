"""A lease table built only from the pure decisions, driven by random agents and a fake clock.

Whatever happens, no two agents hold live conflicting claims, tokens only increase, expired
claims block nobody, the queue never settles with a grantable waiter or a wait-for cycle, and
a fenced write is allowed only under a live claim of the writer's own.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memkeeper.clock import FakeClock
from memkeeper.errors import Invalid, Refused
from memkeeper.leases.decisions import (
    Claim,
    Mode,
    Request,
    check_release,
    conflicts,
    deadlock_victim,
    grant,
    grantable,
    make_request,
    queue_order,
    renew,
    split_expired,
    waiters_ahead,
    write_permission,
)
from memkeeper.leases.targets import covers

TTL_CAP = 60.0
AGENTS = st.sampled_from(["a", "b", "c", "d"])
TARGETS = [
    "src/",
    "src/api",
    "src/api/x.py",
    "src/ap",
    "src/**/*.py",
    "*.md",
    "docs/*.md",
    "CLAUDE.md",
    "CLAUDE.md#project",
    "CLAUDE.md#project/build",
    "CLAUDE.md#other",
    "**",
]
FILES = ["src/api/x.py", "src/ap", "docs/a.md", "CLAUDE.md#project/build", "CLAUDE.md#other"]


class LeaseTable(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock(1_000.0)
        self.claims: list[Claim] = []  # expired ones stay until released: they must not matter
        self.waiters: tuple[Request, ...] = ()
        self.tokens: list[int] = []
        self.serial = itertools.count(1)

    def live(self) -> tuple[Claim, ...]:
        return split_expired(self.claims, self.clock.now())[0]

    # --- rules ---------------------------------------------------------------------------

    @rule(
        agent=AGENTS,
        scope=st.lists(st.sampled_from(TARGETS), min_size=1, max_size=3),
        mode=st.sampled_from(["read", "write"]),
        ttl=st.sampled_from([1.0, 5.0, 30.0, 600.0]),
        priority=st.integers(0, 3),
        wait=st.booleans(),
    )
    def claim(
        self, agent: str, scope: list[str], mode: Mode, ttl: float, priority: int, wait: bool
    ) -> None:
        n = next(self.serial)
        request = make_request(
            f"r{n}", agent, scope, mode=mode, ttl=ttl, priority=priority, arrival=n
        )
        live = self.live()
        if grantable(live, self.waiters, request):
            self.grant(request)
            return
        now = self.clock.now()
        held_against = [c for c in self.claims if now < c.expires_at and conflicts(c, request)]
        assert held_against or waiters_ahead(live, self.waiters, request)
        if wait:
            self.waiters = (*self.waiters, request)
            self.break_deadlocks()
            self.settle()

    @precondition(lambda self: bool(self.claims))
    @rule(index=st.integers(0, 50), agent=AGENTS, ttl=st.sampled_from([1.0, 10.0, 600.0]))
    def renew(self, index: int, agent: str, ttl: float) -> None:
        claim = self.claims[index % len(self.claims)]
        now = self.clock.now()
        try:
            renewed = renew(claim, agent, ttl, now, TTL_CAP)
        except Refused:
            assert agent != claim.agent
            return
        except Invalid:
            assert not claim.is_live(now)
            return
        assert (renewed.token, renewed.expires_at) == (claim.token, now + min(ttl, TTL_CAP))
        self.claims[self.claims.index(claim)] = renewed
        self.settle()

    @precondition(lambda self: bool(self.claims))
    @rule(index=st.integers(0, 50), agent=AGENTS)
    def release(self, index: int, agent: str) -> None:
        claim = self.claims[index % len(self.claims)]
        try:
            check_release(claim, agent)
        except Refused:
            assert agent != claim.agent
            return
        self.claims.remove(claim)
        self.settle()

    @precondition(lambda self: bool(self.waiters))
    @rule(index=st.integers(0, 50))
    def give_up_waiting(self, index: int) -> None:
        gone = self.waiters[index % len(self.waiters)]
        self.waiters = tuple(w for w in self.waiters if w.id != gone.id)
        self.settle()

    @rule(seconds=st.sampled_from([0.5, 1.0, 5.0, 30.0]))
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.settle()

    @rule(agent=AGENTS, path=st.sampled_from(FILES), index=st.integers(0, 50))
    def fenced_write(self, agent: str, path: str, index: int) -> None:
        claim_id = self.claims[index % len(self.claims)].id if self.claims else "none"
        decision = write_permission(self.claims, agent, path, claim_id, self.clock.now())
        if decision.refusal is None:
            (claim,) = [c for c in self.live() if c.id == claim_id]
            assert claim.agent == agent
            assert claim.mode == "write"
            assert any(covers(t, path) for t in claim.targets)
            assert decision.holders == ()

    # --- the shell a store would be ------------------------------------------------------

    def grant(self, request: Request) -> None:
        """Grant, then break any cycle the new holder closed around earlier waiters."""
        token = (self.tokens[-1] if self.tokens else 0) + 1
        self.claims.append(grant(request, token, self.clock.now(), TTL_CAP))
        self.tokens.append(token)
        self.break_deadlocks()

    def settle(self) -> None:
        """Serve the queue in order until nobody more can be granted."""
        progress = True
        while progress:
            progress = False
            for waiter in queue_order(self.live(), self.waiters):
                if grantable(self.live(), self.waiters, waiter):
                    self.waiters = tuple(w for w in self.waiters if w.id != waiter.id)
                    self.grant(waiter)
                    progress = True
                    break

    def break_deadlocks(self) -> None:
        while (victim := deadlock_victim(self.live(), self.waiters)) is not None:
            self.waiters = tuple(w for w in self.waiters if w.id != victim)

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def no_two_agents_hold_live_conflicting_claims(self) -> None:
        for one, other in itertools.combinations(self.live(), 2):
            assert not conflicts(one, other), (one, other)

    @invariant()
    def tokens_strictly_increase(self) -> None:
        assert all(a < b for a, b in itertools.pairwise(self.tokens))

    @invariant()
    def the_queue_is_settled(self) -> None:
        live = self.live()
        assert not any(grantable(live, self.waiters, w) for w in self.waiters)
        assert deadlock_victim(live, self.waiters) is None

    @invariant()
    def waiters_wait_on_live_claims_or_on_each_other(self) -> None:
        now = self.clock.now()
        for waiter in self.waiters:
            held_against = [c for c in self.claims if now < c.expires_at and conflicts(c, waiter)]
            assert held_against or waiters_ahead(self.live(), self.waiters, waiter)


LeaseTable.TestCase.settings = settings(max_examples=250, stateful_step_count=50, deadline=None)
test_lease_table = LeaseTable.TestCase


def test_the_machine_can_fail() -> None:
    """A table that grants without asking must be caught by the invariants."""

    class Careless(LeaseTable):
        @rule(agent=AGENTS)
        def grab_everything(self, agent: str) -> None:
            self.grant(make_request(f"x{next(self.serial)}", agent, ["**"], ttl=600, arrival=0))

    Careless.TestCase.settings = settings(max_examples=50, stateful_step_count=10, deadline=None)
    with pytest.raises(AssertionError):
        Careless.TestCase("runTest").runTest()
