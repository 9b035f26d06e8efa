"""The real lease table, driven by random agents and a fake clock.

Three agents, each with its own ``Workspace`` (and store connection) on one temporary root,
share a ``FakeClock`` and call ``ops.claims.ClaimTable``: claim at once or waiting, wake a
waiter or interrupt it, renew, release, sweep, list, check writes with and without a fence,
and let time pass — or step the wall clock a minute either way, which must change nothing:
claims expire by the machine's uptime (``FakeClock.advance`` moves it, ``set`` does not).

Waiting never blocks the test thread. ``SteppedTable`` is the real table except that a claim
with ``wait`` returns as soon as its request is queued (raising ``Queued``); the machine then
plays the waiting process and makes the two calls the table's blocking loop makes: ``_step``
(collect the outcome, or learn it is still waiting) and ``_forget`` (an interrupted wait).

After every step, read straight from the store: no two agents hold live conflicting claims;
grant tokens only increase and a claim keeps its grant's token; a claim leaves the table only
with a ``claim.released`` or ``claim.expired`` event, and expires only when due; the claims
agents hold last until released or expired; the queue is settled (nobody grantable, no
wait-for cycle) and holds only requests someone waits on; no waiting process sleeps on a
view of the table a change made stale without poking it (``claims.wakeups``); the event
chain is intact.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memkeeper.claims import decisions as rules
from memkeeper.claims import lifecycle as life
from memkeeper.claims import wakeups
from memkeeper.claims.decisions import Claim, Mode, Request
from memkeeper.claims.plan import Plan
from memkeeper.claims.targets import covers, targets_overlap
from memkeeper.clock import FakeClock
from memkeeper.errors import Busy, Invalid, Refused
from memkeeper.events import chain_breaks, parse_utc
from memkeeper.fs import wakeups as fifos
from memkeeper.ops import claimviews
from memkeeper.ops.claimlife import ClaimLife
from memkeeper.ops.claimwaits import _SLACK_S as SLACK_S
from memkeeper.ops.claimwaits import ABANDON_GRACE_S, Cancel
from memkeeper.ops.claimwrites import check_write
from memkeeper.ops.workspace import Workspace
from memkeeper.store.sqlite import Store

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.fs.wakeups import Inbox
    from memkeeper.records import Event

START = 1_700_000_000.0
DEFAULT_TTL, MAX_TTL, GRACE = 20, 60, 30
POLICY = f"""\
version: 1
files:
  - path: docs/strict.md
    class: section-owned
    strict: true
  - path: "**/*.md"
    class: section-owned
leases:
  default_ttl: {DEFAULT_TTL}
  max_ttl: {MAX_TTL}
  takeover_grace: {GRACE}
"""
STRICT_FILES = {"docs/strict.md"}  # the policy's ``strict: true`` rule
CLAUDE_MD = "# project\n\nWhat it is.\n\n## build\n\nmake\n\n# other\n\nMore.\n"

AGENTS = ["a", "b", "c"]
TARGETS = [
    "src/",
    "src/api",
    "src/api/x.py",
    "src/ap",
    "src/**/*.py",
    "*.md",
    "docs/*.md",
    "docs/strict.md",
    "CLAUDE.md",
    "CLAUDE.md#project",
    "CLAUDE.md#project/build",
    "CLAUDE.md#other",
    "**",
]
WRITES = [  # (file, section key) a write may name
    ("src/api/x.py", "main"),
    ("src/ap", "main"),
    ("docs/a.md", "intro"),
    ("docs/strict.md", "intro"),
    ("CLAUDE.md", "project/build"),
    ("CLAUDE.md", "other"),
]
ENDINGS = (
    "claim.released", "claim.expired", "claim.completed", "claim.abandoned", "claim.suspended",
)  # fmt: skip
# the events that give a claim a (new) token: its grant, a scope change that adds, a resume
TOKENS = ("claim.granted", "claim.scoped", "claim.resumed")

SCOPES = st.lists(st.sampled_from(TARGETS), min_size=1, max_size=3)
MODES = st.sampled_from(["read", "write", "write"])
PRIORITIES = st.integers(0, 3)
ACTORS = st.none() | st.sampled_from(AGENTS)  # None: the claim's holder


@functools.cache
def warmed_root() -> Path:
    """A root with its store made, ``CLAUDE.md`` indexed and the policy's verdicts cached
    (parsing YAML is most of what a fresh root costs); each example runs on a copy."""
    root = Path(tempfile.mkdtemp(prefix="memkeeper-leases-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    (root / ".memkeeper.yaml").write_text(POLICY)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    ws = Workspace(root, "warm-up")
    ws.claim_ttls()
    ws.refresh("CLAUDE.md")
    for rel, key in WRITES:
        ws.rule(rel, key)
    assert ws.store.events() == []
    ws.close()
    return root


class Queued(Exception):
    """What ``SteppedTable.claim`` raises once the request waits in the queue."""

    def __init__(self, request: Request, first: float) -> None:
        super().__init__(request.id)
        self.request, self.first = request, first


class SteppedTable(ClaimLife):
    """The real lease table, except that a waiting claim hands its wait back to the caller."""

    def _wait(self, request: Request, inbox: Inbox, cancel: Cancel | None, first: float) -> Claim:
        inbox.close()
        raise Queued(request, first)


@dataclass(frozen=True, slots=True)
class Wait:
    """A request an agent waits on (the machine plays the blocked process)."""

    agent: str
    request: Request
    deadline: float


def fences(claim: Claim, agent: str, target: str) -> bool:
    """May ``agent`` write ``target`` under ``claim`` (a live one)?"""
    mine = (claim.agent, claim.mode) == (agent, "write")
    return mine and any(covers(t, target) for t in claim.targets)


def expected_expiry(now: float, ttl: float | None) -> float:
    return now + min(DEFAULT_TTL if ttl is None else ttl, MAX_TTL)


class TableMachine(RuleBasedStateMachine):
    table = SteppedTable

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="memkeeper-leases-")) / "root"
        shutil.copytree(warmed_root(), self.root)
        self.clock = FakeClock(START)
        self.spaces = {agent: Workspace(self.root, agent, self.clock) for agent in AGENTS}
        assert self.spaces["a"].claim_now() == START  # the boot's epoch: START at uptime 0
        self.tables = {agent: self.table(ws) for agent, ws in self.spaces.items()}
        store = self.spaces["a"].store
        assert isinstance(store, Store)
        self.store: Store = store
        self.held: dict[str, Claim] = {}  # handed to an agent and not released (maybe expired)
        self.handed: list[Claim] = []  # every claim ever handed to an agent, as granted
        self.pending: dict[str, Wait] = {}
        self.log: list[Event] = []
        self.rows: dict[str, Claim] = {}  # the stored claims as the last step left them
        self.final: dict[str, ClaimRecord] = {}  # records seen in a terminal state
        self.checked = 0  # events up to this one were checked by the last step
        # each waiting process's view of the table at its last look and when it will look
        # again at the latest, and whom the tables poked since (``fs.wakeups.notify``,
        # replaced while the machine runs)
        self.seen: dict[str, tuple[wakeups.View, float]] = {}
        self.poked: set[str] = set()
        self._notify = fifos.notify
        fifos.notify = self.notified

    def notified(self, home: str, request_ids: Iterable[str]) -> None:
        self.poked.update(request_ids)

    def teardown(self) -> None:
        fifos.notify = self._notify
        for ws in self.spaces.values():
            ws.close()
        shutil.rmtree(self.root.parent, ignore_errors=True)

    # --- reading the store ---------------------------------------------------------------

    def now(self) -> float:
        """The claims' time: the boot's epoch plus the uptime, whatever the wall clock says."""
        return START + self.clock.since_boot()[1]

    def events(self) -> list[Event]:
        """The whole log (read incrementally: it only grows)."""
        self.log += self.store.events(since=self.log[-1].id if self.log else 0)
        return self.log

    def events_of(self, claim_id: str, type: str) -> list[Event]:
        return [e for e in self.events() if e.type == type and e.data["id"] == claim_id]

    def live_rows(self) -> list[Claim]:
        return [c for c in self.store.claim_rows() if c.is_live(self.now())]

    def views(self) -> dict[str, wakeups.View]:
        """Each queued request's view of the table as stored (``wakeups.views``)."""
        return wakeups.views(self.store.claim_rows(), self.store.waiter_rows())

    def waiter(self, request_id: str) -> WaiterRow | None:
        return next((w for w in self.store.waiter_rows() if w.request.id == request_id), None)

    def queued(self) -> tuple[Request, ...]:
        return tuple(w.request for w in self.store.waiter_rows() if w.state == "waiting")

    def quiet(self) -> bool:
        """Will the next transaction's sweep find nothing to do (nothing due, no wait gone)?"""
        now = self.now()
        due = any(not c.is_live(now) for c in self.store.claim_rows())
        gone = any(now > w.deadline + ABANDON_GRACE_S for w in self.store.waiter_rows())
        return not due and not gone

    def take(self, agent: str, claim: Claim) -> None:
        """``agent`` now holds ``claim``: it is stored, live and its own."""
        assert claim.agent == agent
        assert self.store.claim_row(claim.id) == claim
        assert claim.is_live(self.now())
        self.held[claim.id] = claim
        self.handed.append(claim)

    # --- claiming and waiting ------------------------------------------------------------

    @rule(
        agent=st.sampled_from(AGENTS),
        scope=SCOPES,
        mode=MODES,
        ttl=st.sampled_from([None, 1.0, 5.0, 30.0, 600.0]),
        priority=PRIORITIES,
        strict=st.booleans(),
    )
    def claim_at_once(
        self,
        agent: str,
        scope: list[str],
        mode: Mode,
        ttl: float | None,
        priority: int,
        strict: bool,
    ) -> None:
        self.claim(agent, scope, mode, ttl, priority, strict, None)

    @rule(
        agent=st.sampled_from(AGENTS),
        scope=SCOPES,
        mode=MODES,
        ttl=st.sampled_from([None, 5.0, 600.0]),
        priority=PRIORITIES,
        wait=st.sampled_from([3.0, 60.0]),
    )
    def claim_or_wait(
        self,
        agent: str,
        scope: list[str],
        mode: Mode,
        ttl: float | None,
        priority: int,
        wait: float,
    ) -> None:
        self.claim(agent, scope, mode, ttl, priority, False, wait)

    @precondition(lambda self: bool(self.live_rows()))
    @rule(
        agent=st.sampled_from(AGENTS),
        index=st.integers(0, 50),
        priority=PRIORITIES,
        wait=st.sampled_from([3.0, 60.0]),
    )
    def wait_for_another(self, agent: str, index: int, priority: int, wait: float) -> None:
        """Claim, waiting, what another agent holds: queues form, and cycles close."""
        theirs = [t for c in self.live_rows() if c.agent != agent for t in c.targets]
        if not theirs:
            return
        self.claim(agent, [theirs[index % len(theirs)]], "write", None, priority, False, wait)

    def claim(
        self,
        agent: str,
        scope: list[str],
        mode: Mode,
        ttl: float | None,
        priority: int,
        strict: bool,
        wait: float | None,
    ) -> None:
        """Granted as asked, queued, or busy with whoever is in the way; when the table has
        nothing to sweep first, exactly as the pure decision says."""
        now, quiet = self.now(), self.quiet()
        probe = rules.make_request(  # arriving after everyone queued, as the real one will
            "probe", agent, scope, mode=mode, priority=priority, ttl=1, arrival=10**9
        )
        could = rules.grantable(tuple(self.store.claim_rows()), self.queued(), probe)
        try:
            claim = self.tables[agent].claim(
                scope, mode=mode, ttl=ttl, priority=priority, strict=strict, wait=wait,
                objective="machine",
            )  # fmt: skip
        except Queued as queued:
            self.enqueue(agent, wait, queued.request, queued.first)
            assert not quiet or not could, "a grantable request was queued"
            return
        except Busy as busy:
            self.refused(agent, wait, busy)
            assert not quiet or not could, "a grantable request was refused"
            return
        assert not quiet or could, "a request was granted past a holder or the queue"
        assert claim.targets == tuple(dict.fromkeys(scope))
        assert (claim.mode, claim.priority, claim.strict) == (mode, priority, strict)
        assert (claim.granted_at, claim.expires_at) == (now, expected_expiry(now, ttl))
        self.take(agent, claim)
        event("claim: granted at once")

    def enqueue(self, agent: str, wait: float | None, request: Request, first: float) -> None:
        """The request waits in the queue (or has just been granted or aborted there: then
        its process looks again at once); the transaction that queued it was its first look."""
        assert wait is not None
        row = self.waiter(request.id)
        assert row is not None
        assert (first == 0) == (row.state != "waiting")
        self.pending[request.id] = Wait(agent, request, self.now() + wait)
        if first:
            self.seen[request.id] = (self.views()[request.id], self.now() + first)
        event("claim: queued")

    def refused(self, agent: str, wait: float | None, busy: Busy) -> None:
        """A refusal names someone in the way and took nothing."""
        assert wait is None
        assert busy.reason == "held"
        assert busy.holders or busy.fields["waiters"], "busy, but nobody in the way"
        stored = {c.id: c for c in self.store.claim_rows()}
        for holder in busy.holders:
            assert holder["agent"] != agent
            assert holder["id"] in stored
        assert busy.fields["id"] not in stored, "all or nothing"
        assert self.waiter(busy.fields["id"]) is None
        event("claim: busy")

    @precondition(lambda self: bool(self.pending))
    @rule(index=st.none() | st.integers(0, 50))
    def wake(self, index: int | None) -> None:
        """One waiting process wakes (a poke, or its timer) and looks at its request; or
        (``None``) all of them do, in arrival order, as after a change pokes them all."""
        waits = list(self.pending.values())
        for wait in waits if index is None else [waits[index % len(waits)]]:
            self.look(wait)

    def look(self, wait: Wait) -> None:
        """Still waiting (and rightly), granted, or busy for a reason the table recorded."""
        outcome = self.tables[wait.agent]._step(wait.request)
        now, request_id = self.now(), wait.request.id
        self.poked.discard(request_id)
        self.seen.pop(request_id, None)
        if isinstance(outcome, float):
            self.seen[request_id] = (self.views()[request_id], now + outcome)
            row = self.waiter(request_id)
            assert row is not None
            assert (row.state, now < row.deadline, outcome > 0) == ("waiting", True, True)
            event("wake: still waiting")
            return
        del self.pending[request_id]
        assert self.waiter(request_id) is None, "a finished wait left its row"
        if isinstance(outcome, Claim):
            assert outcome.id == request_id
            assert (outcome.targets, outcome.mode) == (wait.request.targets, wait.request.mode)
            self.take(wait.agent, outcome)
            event("wake: granted")
            return
        assert self.store.claim_row(request_id) is None
        event(f"wake: busy ({outcome.reason})")
        if outcome.reason == "deadlock":
            (aborted,) = self.events_of(request_id, "claim.aborted")
            assert aborted.data["reason"] == "deadlock"
        elif outcome.reason == "timeout":  # now, or when the table dropped the wait
            assert self.now() >= wait.deadline, "timed out early"
        else:
            assert outcome.reason == "expired"
            assert self.events_of(request_id, "claim.expired")

    @precondition(lambda self: bool(self.pending))
    @rule(index=st.integers(0, 50))
    def interrupt(self, index: int) -> None:
        """A waiting process is interrupted: its request, or its uncollected grant, goes."""
        wait = list(self.pending.values())[index % len(self.pending)]
        self.tables[wait.agent]._forget(wait.request.id)
        del self.pending[wait.request.id]
        self.seen.pop(wait.request.id, None)
        assert self.waiter(wait.request.id) is None
        assert self.store.claim_row(wait.request.id) is None

    # --- renew and release -----------------------------------------------------------------

    @precondition(lambda self: bool(self.handed))
    @rule(index=st.integers(0, 50), actor=ACTORS, ttl=st.sampled_from([None, 1.0, 10.0, 600.0]))
    def renew(self, index: int, actor: str | None, ttl: float | None) -> None:
        claim_id, agent = self.pick(index, actor)
        before, now = self.store.claim_row(claim_id), self.now()
        try:
            renewed = self.tables[agent].renew(claim_id, ttl)
        except (Refused, Invalid) as error:
            self.turned_down(claim_id, agent, before, error)
            return
        assert before is not None
        assert (before.agent, before.is_live(now)) == (agent, True)
        assert renewed == replace(before, expires_at=expected_expiry(now, ttl))
        self.held[claim_id] = renewed
        event("renew: renewed")

    @precondition(lambda self: bool(self.handed))
    @rule(index=st.integers(0, 50), actor=ACTORS)
    def release(self, index: int, actor: str | None) -> None:
        claim_id, agent = self.pick(index, actor)
        before, now = self.store.claim_row(claim_id), self.now()
        try:
            released = self.tables[agent].release(claim_id)
        except (Refused, Invalid) as error:
            self.turned_down(claim_id, agent, before, error)
            return
        assert before is not None
        assert (before.agent, before.is_live(now)) == (agent, True)
        assert released == before
        assert self.store.claim_row(claim_id) is None
        (done,) = self.events_of(claim_id, "claim.released")
        assert done.data["held_s"] == round(now - before.granted_at, 3)
        del self.held[claim_id]
        event("release: released")

    def pick(self, index: int, actor: str | None) -> tuple[str, str]:
        """A claim once handed out, and who acts on it (``None``: its holder)."""
        claim = self.handed[index % len(self.handed)]
        return claim.id, claim.agent if actor is None else actor

    def turned_down(
        self, claim_id: str, agent: str, before: Claim | None, error: Refused | Invalid
    ) -> None:
        """Only the holder may renew or release a stored claim; one no longer stored (or
        due, and swept by the call itself) is reported as released or expired."""
        if isinstance(error, Refused):
            assert error.reason == "not_holder"
            assert before is not None
            assert before.agent != agent
        elif before is None:  # its record says how it ended: released, expired, completed …
            record = self.store.claim_record(claim_id)
            assert record is not None
            assert error.reason == record.state
        else:
            assert (before.agent, error.reason) == (agent, "expired")
            assert not before.is_live(self.now())
        event(f"renew or release: {error.reason}")

    # --- scope, completion, abandon, suspend, resume, takeover ----------------------------------

    @precondition(lambda self: bool(self.handed))
    @rule(index=st.integers(0, 50), actor=ACTORS, add=SCOPES, drop=st.booleans())
    def change_scope(self, index: int, actor: str | None, add: list[str], drop: bool) -> None:
        claim_id, agent = self.pick(index, actor)
        before = self.store.claim_row(claim_id)
        remove = list(before.targets[:1]) if before is not None and drop else []
        try:
            record = self.tables[agent].scope(claim_id, add, remove, None)
        except (Busy, Refused, Invalid) as error:
            assert self.store.claim_row(claim_id) in (before, None)
            event(f"scope: {type(error).__name__}")
            return
        assert before is not None
        row = self.store.claim_row(claim_id)
        assert row is not None
        assert row.targets == record.targets
        assert row.token >= before.token
        self.held[claim_id] = row
        event("scope: changed")

    @precondition(lambda self: bool(self.handed))
    @rule(
        index=st.integers(0, 50),
        actor=ACTORS,
        to=st.sampled_from(["completed", "abandoned", "suspended"]),
    )
    def end_it(self, index: int, actor: str | None, to: str) -> None:
        claim_id, agent = self.pick(index, actor)
        before = self.store.claim_record(claim_id)
        table = self.tables[agent]
        try:
            if to == "completed":
                record = table.complete(claim_id)  # no --verify: no process in a unit test
            elif to == "abandoned":
                record = table.abandon(claim_id, "the machine says so")
            else:
                record = table.suspend(claim_id)
        except (Refused, Invalid) as error:
            reason = error.reason
            event(f"{to}: {reason}")
            if before is not None and before.agent == agent and before.state == "active":
                assert reason in ("claim_state", "expired"), reason  # expired by this call
            return
        assert record.state == to
        assert self.store.claim_row(claim_id) is None
        self.held.pop(claim_id, None)
        event(f"{to}: done")

    @precondition(lambda self: bool(self.handed))
    @rule(index=st.integers(0, 50), actor=ACTORS)
    def resume(self, index: int, actor: str | None) -> None:
        claim_id, agent = self.pick(index, actor)
        try:
            claim = self.tables[agent].resume(claim_id)
        except (Busy, Refused, Invalid) as error:
            event(f"resume: {type(error).__name__}")
            return
        self.take(agent, claim)
        event("resume: resumed")

    @precondition(lambda self: bool(self.handed))
    @rule(index=st.integers(0, 50), agent=st.sampled_from(AGENTS))
    def take_over(self, index: int, agent: str) -> None:
        claim_id = self.pick(index, None)[0]
        try:
            claim, old = self.tables[agent].takeover(claim_id)
        except (Busy, Invalid) as error:
            event(f"takeover: {type(error).__name__}")
            return
        assert (old.state, old.successor) == ("taken-over", claim.id)
        assert self.store.claim_record(claim.id).predecessor == claim_id  # type: ignore[union-attr]
        self.take(agent, claim)
        event("takeover: taken")

    # --- time, sweeps, listing and writes ----------------------------------------------------

    @rule(
        seconds=st.sampled_from([0.0, 0.5, 1.0, 5.0, 30.0]),
        step=st.sampled_from([0.0, 0.0, -60.0, 60.0]),
        sweeper=st.none() | st.sampled_from(AGENTS),
    )
    def let_time_pass(self, seconds: float, step: float, sweeper: str | None) -> None:
        """Time passes, and the wall clock may be stepped a minute either way (which ends
        no claim early and keeps none late); then the daemon (of ``sweeper``) may expire what
        is due, each claim with its event, or (``None``) the next operation of anyone finds
        it."""
        self.clock.advance(seconds)
        self.clock.set(self.clock.now() + step)
        if sweeper is None:
            return
        due = [c for c in self.store.claim_rows() if not c.is_live(self.now())]
        assert self.tables[sweeper].sweep() == due
        for claim in due:
            assert self.store.claim_row(claim.id) is None
            assert self.events_of(claim.id, "claim.expired"), "expired without an event"
        if due:
            event("sweep: expired some")

    @rule(agent=st.sampled_from(AGENTS))
    def list_and_count(self, agent: str) -> None:
        claims, waiters, now = self.tables[agent].live()
        assert now == self.now()
        assert all(c.is_live(now) for c in claims)
        assert claims == self.store.claim_rows()
        assert tuple(w.request for w in waiters) == self.queued()
        counts = claimviews.metrics(self.tables[agent].ws)
        assert (counts["claims_held"], counts["queue_depth"]) == (len(claims), len(waiters))

    @rule(
        agent=st.sampled_from(AGENTS),
        write=st.sampled_from(WRITES),
        index=st.none() | st.integers(0, 50),
    )
    def write(self, agent: str, write: tuple[str, str], index: int | None) -> None:
        """Fenced (under a claim once handed out, else an unknown one): allowed exactly under
        a live, own, write claim covering the section. Unfenced: refused exactly when another
        agent's live claim touching it is strict, or the policy makes every claim strict."""
        rel, key = write
        target = f"{rel}#{key}"
        claim_id = self.fence_id(index)
        live = self.live_rows()
        touching = [c for c in live if any(targets_overlap(t, target) for t in c.targets)]
        others = [c for c in touching if c.agent != agent]
        blocking = [c for c in others if c.strict or rel in STRICT_FILES]
        fence = any(c.id == claim_id and fences(c, agent, target) for c in live)
        if fence:
            assert others == [], f"{others} touch {target}, which {claim_id} covers"
        allowed = fence if claim_id is not None else not blocking
        if not allowed:
            with pytest.raises(Refused) as refused:
                check_write(self.spaces[agent], rel, key, claim_id)
            assert refused.value.reason == "claimed"
            event("write: refused")
            return
        warnings = check_write(self.spaces[agent], rel, key, claim_id)
        assert len(warnings) == len(others) - len(blocking)
        event("write: allowed")

    def fence_id(self, index: int | None) -> str | None:
        if index is None:
            return None
        return self.pick(index, None)[0] if self.handed else "c404"

    # --- invariants --------------------------------------------------------------------------

    @invariant()
    def no_two_agents_hold_live_conflicting_claims(self) -> None:
        for one, other in itertools.combinations(self.live_rows(), 2):
            assert not rules.conflicts(one, other), f"conflicting live claims: {one}, {other}"

    @invariant()
    def tokens_only_increase_and_stay_with_their_claim(self) -> None:
        """Every new token (a grant, a widening, a resume) is above every earlier one; a
        claim keeps the token its last such event gave it."""
        given = [e for e in self.events() if e.type in TOKENS]
        grants = [e for e in given if e.type == "claim.granted"]
        assert len({e.data["id"] for e in grants}) == len(grants), "a claim id granted twice"
        token_of: dict[str, int] = {}
        for e in given:
            token = e.data["token"]
            if token != token_of.get(e.data["id"]):  # a scope change that only narrows
                assert all(token > t for t in token_of.values()), f"token {token} not above"
            token_of[e.data["id"]] = token
        for claim in [*self.store.claim_rows(), *self.held.values()]:
            assert token_of.get(claim.id) == claim.token, f"{claim} lacks its last token"

    @invariant()
    def nothing_leaves_a_terminal_state_and_every_live_claim_is_active(self) -> None:
        records = {r.id: r for r in self.store.claim_records()}
        for claim_id, final in self.final.items():
            assert records[claim_id] == final, f"{claim_id} left its terminal state"
        self.final |= {i: r for i, r in records.items() if r.state in life.TERMINAL}
        for claim in self.store.claim_rows():
            record = records.get(claim.id)  # (the broken tables below store claims bare)
            if record is not None:
                assert (record.state, record.targets) == ("active", claim.targets), record

    @invariant()
    def claims_leave_only_with_an_event_and_expire_only_when_due(self) -> None:
        new = [e for e in self.events() if e.id > self.checked]
        ended = {e.data["id"] for e in new if e.type in ENDINGS}
        stored = {c.id: c for c in self.store.claim_rows()}
        gone = set(self.rows) - set(stored)
        assert gone <= ended, f"claims vanished without an event: {sorted(gone - ended)}"
        for expired in (e for e in new if e.type == "claim.expired"):  # (its ts: the wall's)
            assert parse_utc(expired.data["expires_at"]) <= self.now() + 0.0005, expired
            assert expired.data["id"] not in stored
        self.rows, self.checked = stored, self.log[-1].id if self.log else 0

    @invariant()
    def held_claims_last_until_released_or_expired(self) -> None:
        """Stored as last granted or renewed until the table expires it; then gone for good,
        even if the clock is stepped back."""
        expired = {e.data["id"] for e in self.events() if e.type == "claim.expired"}
        for claim in self.held.values():
            row = self.store.claim_row(claim.id)
            if claim.id in expired:
                assert row is None, f"{claim} expired, yet is stored as {row}"
            else:
                assert row == claim, f"{claim} is stored as {row}"

    @invariant()
    def the_queue_is_settled(self) -> None:
        """As the last transaction left it: nobody grantable, no wait-for cycle (against the
        stored claims, even those due since: they are what the table decided on)."""
        live, queued = tuple(self.store.claim_rows()), self.queued()
        ready = [r.id for r in queued if rules.grantable(live, queued, r)]
        assert ready == [], f"grantable yet waiting: {ready}"
        assert rules.deadlock_victim(live, queued) is None, "a wait-for cycle was left"

    @invariant()
    def the_queue_holds_only_requests_someone_waits_on(self) -> None:
        rows = {w.request.id for w in self.store.waiter_rows()}
        assert rows <= set(self.pending), f"orphan waiter rows: {sorted(rows - set(self.pending))}"

    @invariant()
    def no_waiter_sleeps_on_a_stale_view(self) -> None:
        """A waiting process that was not poked since its last look, and whose next look has
        not come (its own timer wakes it then), would find its row as it was then, and
        nothing that stops it at the front of the queue expires before that next look."""
        views, now = self.views(), self.now()
        for request_id, (seen, next_look) in self.seen.items():
            if request_id in self.poked or now >= next_look:
                continue
            state, _, soonest = views[request_id]
            assert state == seen[0], f"{request_id} sleeps on a stale view: {state}"
            late = next_look - soonest - SLACK_S  # (it wakes just after an expiry it timed)
            assert late <= 1e-6, f"{request_id} sleeps on a stale view: {late} s past an expiry"

    @invariant()
    def the_event_chain_is_intact(self) -> None:
        assert chain_breaks(self.events()) == []


SETTINGS = settings(
    max_examples=100,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TableMachine.TestCase.settings = SETTINGS
test_the_claim_table = TableMachine.TestCase


@pytest.mark.slow
def test_the_claim_table_at_length() -> None:
    run_state_machine_as_test(
        TableMachine, settings=settings(SETTINGS, max_examples=1_000, stateful_step_count=60)
    )


# --- the machine catches broken tables ------------------------------------------------------


class GreedyTable(SteppedTable):
    """Grants every request at once, whoever holds what."""

    def _enter(self, request: Request, now: float) -> Claim | None:
        return self._grant(request, now)


class StuckTable(SteppedTable):
    """Hands out token 1 for every grant."""

    def _grant(self, request: Request, now: float) -> Claim:
        claim = rules.grant(request, 1, now, self.max_ttl)
        self.store.put_claim(claim)
        self.store.put_claim_record(life.open_record(claim, Plan(), "2023-11-14T22:13:20Z"))
        self._event("claim.granted", claim, {})
        self.changed = True
        return claim


class DeafTable(SteppedTable):
    """Serves the queue but pokes nobody."""

    def _serve(self, now: float, horizon: float) -> list[str]:
        super()._serve(now, horizon)
        return []


class Greedy(TableMachine):
    table = GreedyTable


class Deaf(TableMachine):
    table = DeafTable


class Stuck(TableMachine):
    table = StuckTable


class Vanishing(TableMachine):
    @precondition(lambda self: bool(self.held))
    @rule(index=st.integers(0, 50))
    def drop_a_claim_silently(self, index: int) -> None:
        claim = list(self.held.values())[index % len(self.held)]
        with self.store.writing():
            self.store.drop_claim(claim.id)


class Overlapping(TableMachine):
    @precondition(lambda self: any(c.mode == "write" for c in self.live_rows()))
    @rule()
    def store_a_conflicting_claim(self) -> None:
        held = next(c for c in self.live_rows() if c.mode == "write")
        other = next(a for a in AGENTS if a != held.agent)
        with self.store.writing():
            token = self.store.bump("token")
            self.store.put_claim(replace(held, id=f"x{token}", token=token, agent=other))


@pytest.mark.parametrize(
    ("broken", "caught_by"),
    [
        (Greedy, "granted past a holder or the queue|conflicting live claims"),
        (Stuck, "tokens"),
        (Vanishing, "vanished without an event|is stored as"),
        (Overlapping, "conflicting live claims"),
    ],
)
def test_the_machine_can_fail(broken: type[TableMachine], caught_by: str) -> None:
    """A table that grants past holders, repeats tokens, or loses or forges claims is caught."""
    quick = settings(
        SETTINGS, max_examples=200, stateful_step_count=20, phases=[Phase.generate], database=None
    )
    with pytest.raises(AssertionError, match=caught_by):
        run_state_machine_as_test(broken, settings=quick)


def test_the_machine_catches_a_table_that_pokes_nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table that serves the queue but wakes nobody leaves a granted waiter asleep."""
    monkeypatch.setattr(sys.modules[__name__], "event", lambda _: None)  # (outside hypothesis)
    machine = Deaf()
    try:
        machine.claim_at_once("a", ["src/"], "write", 600.0, 0, False)
        machine.wait_for_another("b", 0, 0, 60.0)
        machine.wake(None)  # b looks: still waiting, behind a's claim
        machine.no_waiter_sleeps_on_a_stale_view()
        machine.release(0, None)  # a's release grants b, and pokes nobody
        with pytest.raises(AssertionError, match="sleeps on a stale view: granted"):
            machine.no_waiter_sleeps_on_a_stale_view()
    finally:
        machine.teardown()
