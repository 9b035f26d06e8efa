"""Claim decisions: what overlaps, who blocks whom, queue order, deadlocks and write checks.

Pure functions over frozen data and an explicit ``now``; the store persists what they decide.

A target is a path, a directory (trailing ``/``), a glob or ``PATH#KEY``, relative to the root.
A path covers itself and everything below it, on whole segments, slash or no slash. Globs take
gitignore wildcards (``*``, ``?``, ``[...]`` in a segment, ``**`` across segments) but are anchored
at the root like every other target (``*.md`` is the root's, ``**/*.md`` all of them) and cover
what they match and everything below it. ``PATH#KEY`` needs the full key: resolve ``#build`` to
``project/build`` before claiming. Deadlock tie-break: lower priority loses, then later arrival.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from memkeeper import limits
from memkeeper.claims.ahead import Ahead
from memkeeper.claims.targets import any_overlap, covers, normalize_target, targets_overlap
from memkeeper.errors import Invalid, Refused

if TYPE_CHECKING:
    from memkeeper.claims.plan import Plan

Mode = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class Claim:
    """A granted claim; live while ``now < expires_at`` on the claims' clock — or, where the
    store judges expiry itself (etcd: whether the claim's lease still holds its key), while
    the store says so (``alive``), whatever any clock says."""

    id: str
    token: int
    agent: str
    mode: Mode
    targets: tuple[str, ...]
    priority: int
    strict: bool
    granted_at: float
    expires_at: float
    objective: str
    # what the answer that granted or renewed it warns of (a TTL capped at ``max_ttl``); not
    # stored, and no part of the claim's identity
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # the store's own verdict where it keeps one (None: the clock's); no part of the identity
    alive: bool | None = field(default=None, compare=False)
    # what the claim announced (its record's plan until the record is first written)
    plan: Plan | None = field(default=None, compare=False)

    def is_live(self, now: float) -> bool:
        return self.alive if self.alive is not None else now < self.expires_at

    def seconds_left(self, now: float) -> int:
        return math.ceil(max(0.0, self.expires_at - now))


@dataclass(frozen=True, slots=True)
class Request:
    """A claim being asked for; ``arrival`` is its place in line among equal priorities."""

    id: str
    agent: str
    mode: Mode
    targets: tuple[str, ...]
    priority: int
    strict: bool
    ttl: float
    objective: str
    arrival: int
    # what the claim announces (its record keeps it); None: nothing
    plan: Plan | None = field(default=None, compare=False)


Ask = Claim | Request


@dataclass(frozen=True, slots=True)
class WriteDecision:
    """May ``agent`` write ``target`` now? ``refusal`` (reason ``claimed``) or ``warnings``."""

    warnings: tuple[str, ...] = ()
    refusal: str | None = None
    holders: tuple[Claim, ...] = ()


# --- who blocks whom ---------------------------------------------------------------------


def make_request(
    id: str,
    agent: str,
    targets: Iterable[str],
    *,
    mode: Mode = "write",
    priority: int = 0,
    strict: bool = False,
    ttl: float,
    objective: str = "",
    arrival: int,
    plan: Plan | None = None,
) -> Request:
    """A ``Request`` with normalized, de-duplicated targets; ``Invalid`` on a bad one (or on
    more of them, or a longer objective, than ``memkeeper.limits`` allows)."""
    given = list(targets)
    if len(given) > limits.MAX_TARGETS:
        raise Invalid(
            f"a claim names {len(given):,} targets; at most {limits.MAX_TARGETS} — claim a "
            "directory or a glob instead"
        )
    limits.text(objective, "the objective", limit=limits.MAX_OBJECTIVE_CHARS)
    limits.whole(priority, "the priority", signed=True)
    norm = tuple(dict.fromkeys(normalize_target(target) for target in given))
    if not norm:
        raise Invalid("a claim needs at least one target — name a path, glob or PATH#KEY")
    if mode not in ("read", "write"):
        raise Invalid(f"unknown claim mode {mode!r} — use --mode read or --mode write")
    _check_ttl(ttl)
    return Request(id, agent, mode, norm, priority, strict, ttl, objective, arrival, plan)


def conflicts(a: Ask, b: Ask) -> bool:
    """Different agents, at least one writing, some target of each overlapping."""
    if a.agent == b.agent or (a.mode == "read" and b.mode == "read"):
        return False
    return any_overlap(a.targets, b.targets)


def split_expired(
    claims: Iterable[Claim], now: float
) -> tuple[tuple[Claim, ...], tuple[Claim, ...]]:
    """(live, expired): a claim is live while ``now < expires_at``."""
    claims = tuple(claims)
    return (
        tuple(c for c in claims if c.is_live(now)),
        tuple(c for c in claims if not c.is_live(now)),
    )


def blockers(live: Iterable[Claim], request: Request) -> tuple[Claim, ...]:
    """The live claims of other agents that stop ``request``; all its targets or none."""
    return tuple(claim for claim in live if conflicts(claim, request))


# --- the queue ---------------------------------------------------------------------------


def effective_priorities(live: tuple[Claim, ...], waiters: tuple[Request, ...]) -> dict[str, int]:
    """Request id -> priority, raised to that of any waiter its agent blocks (transitively)."""
    best = {w.id: w.priority for w in waiters}
    # Only an agent that holds a claim and waits itself passes a priority on: with none
    # (most queues), nothing is raised, and no waiter's blockers need be found.
    waiting = {w.agent for w in waiters}
    passing = tuple(c for c in live if c.agent in waiting)
    if not passing:
        return best
    holders = {w.id: {c.agent for c in blockers(passing, w)} for w in waiters}
    changed = True
    while changed:
        changed = False
        for blocked in waiters:
            for holder in waiters:
                if holder.agent in holders[blocked.id] and best[holder.id] < best[blocked.id]:
                    best[holder.id] = best[blocked.id]
                    changed = True
    return best


def effective_priority(
    live: tuple[Claim, ...], waiters: tuple[Request, ...], request: Request
) -> int:
    return effective_priorities(live, _joined(waiters, request))[request.id]


def queue_order(live: tuple[Claim, ...], waiters: tuple[Request, ...]) -> tuple[Request, ...]:
    """Waiters in serving order: effective priority high to low, then arrival."""
    best = effective_priorities(live, waiters)
    return tuple(sorted(waiters, key=lambda w: (-best[w.id], w.arrival, w.id)))


def waiters_ahead(
    live: tuple[Claim, ...], waiters: tuple[Request, ...], request: Request
) -> tuple[Request, ...]:
    """Conflicting waiters served before ``request``: later arrivals may not starve them."""
    return _ahead(queue_order(live, _joined(waiters, request)), request)


def _ahead(order: tuple[Request, ...], request: Request) -> tuple[Request, ...]:
    place = next(i for i, w in enumerate(order) if w.id == request.id)
    return tuple(w for w in order[:place] if conflicts(w, request))


def first_grantable(live: tuple[Claim, ...], waiters: tuple[Request, ...]) -> Request | None:
    """The first of ``waiters`` in queue order that is ``grantable``, or None (the queue
    ordered once, not once per waiter)."""
    ahead = Ahead()
    for request in queue_order(live, waiters):
        if not ahead.blocks(request) and not blockers(live, request):
            return request
        ahead.add(request)
    return None


def grantable(live: tuple[Claim, ...], waiters: tuple[Request, ...], request: Request) -> bool:
    """No live claim blocks ``request`` and no conflicting waiter is ahead of it (with an
    empty queue, nobody is: the common case needs no queue order)."""
    if blockers(live, request):
        return False
    return not waiters or not waiters_ahead(live, waiters, request)


def _joined(waiters: tuple[Request, ...], request: Request) -> tuple[Request, ...]:
    return waiters if any(w.id == request.id for w in waiters) else (*waiters, request)


# --- deadlocks ---------------------------------------------------------------------------

_Node = tuple[Literal["agent", "request"], str]


def deadlock_victim(live: tuple[Claim, ...], waiters: tuple[Request, ...]) -> str | None:
    """The id of the request to abort to break a wait-for cycle, or None when there is none.

    A request waits for the agents holding its blockers and for the conflicting requests
    queued ahead of it; an agent waits for all of its own requests. Of the requests on a
    cycle the lowest priority loses, then the latest arrival. Ask after every new wait and
    after every grant (a grant can close a cycle among earlier waiters); abort the victim and
    ask again, since one victim breaks one cycle.
    """
    # A cycle goes through an agent that holds a claim in someone's way (the only edges
    # into an agent) and waits itself (the only edges out of one): the edges between
    # requests point ahead in the queue's order, which no cycle can.
    holding = {c.agent for c in live}
    if not any(w.agent in holding for w in waiters):
        return None
    graph = _wait_for_graph(live, waiters)
    stuck = [w for w in waiters if _on_cycle(graph, ("request", w.id))]
    return min(stuck, key=lambda w: (w.priority, -w.arrival)).id if stuck else None


def would_deadlock(live: tuple[Claim, ...], waiters: tuple[Request, ...], request: Request) -> bool:
    """Would queueing ``request`` behind ``waiters`` close a wait-for cycle?"""
    return deadlock_victim(live, _joined(waiters, request)) is not None


def _wait_for_graph(
    live: tuple[Claim, ...], waiters: tuple[Request, ...]
) -> dict[_Node, set[_Node]]:
    graph: dict[_Node, set[_Node]] = {}
    order = queue_order(live, waiters)
    for waiter in order:
        node: _Node = ("request", waiter.id)
        graph.setdefault(("agent", waiter.agent), set()).add(node)
        edges = graph.setdefault(node, set())
        edges.update(("agent", claim.agent) for claim in blockers(live, waiter))
        edges.update(("request", w.id) for w in _ahead(order, waiter))
    return graph


def _on_cycle(graph: dict[_Node, set[_Node]], start: _Node) -> bool:
    seen: set[_Node] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node == start:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


# --- grant, renew, release ---------------------------------------------------------------


def grant(request: Request, token: int, now: float, ttl_cap: float) -> Claim:
    """The claim ``request`` becomes: the store supplies a token above every earlier one."""
    _check_ttl(request.ttl)
    r = request
    expires = now + min(r.ttl, ttl_cap)
    return Claim(
        r.id, token, r.agent, r.mode, r.targets, r.priority, r.strict, now, expires, r.objective,
        plan=r.plan,
    )  # fmt: skip


def renew(claim: Claim, agent: str, ttl: float, now: float, ttl_cap: float) -> Claim:
    """The claim with ``expires_at = now + min(ttl, ttl_cap)``; same token, same grant.

    Only its holder may renew it (``Refused``, reason ``not_holder``), and only while it is
    live: an expired claim is gone and its scope may be someone else's (``Invalid``, reason
    ``expired``): claim again and re-read.
    """
    check_release(claim, agent)
    if not claim.is_live(now):
        raise expired_error(claim, now)
    _check_ttl(ttl)
    return replace(claim, expires_at=now + min(ttl, ttl_cap))


def expired_error(claim: Claim, now: float) -> Invalid:
    """What renewing (or collecting) a claim that has expired says."""
    ago = math.floor(now - claim.expires_at)
    return Invalid(
        f"claim {claim.id} expired {ago} s ago — take a new claim and re-read what it covered",
        reason="expired",
    )


def check_release(claim: Claim, agent: str) -> None:
    """``Refused`` (reason ``not_holder``) unless ``agent`` holds ``claim``."""
    if claim.agent != agent:
        raise Refused(
            f"claim {claim.id} is held by {claim.agent}, not {agent} — only its holder may "
            "renew or release it",
            reason="not_holder",
        )


def _check_ttl(ttl: float) -> None:
    if not ttl > 0:  # also catches NaN
        raise Invalid(f"ttl must be a positive number of seconds, not {ttl} — pass --ttl 120")


# --- writes ------------------------------------------------------------------------------


def write_permission(
    claims: Iterable[Claim],
    agent: str,
    target: str,
    claim_id: str | None,
    now: float,
    *,
    strict: bool = False,
) -> WriteDecision:
    """May ``agent`` write ``target`` (a file or ``PATH#KEY``) now, under ``claim_id`` if given?

    Other agents' overlapping live claims warn when advisory and refuse when strict (a write
    conflicts with reads too); ``strict`` (the policy's ``strict: true`` for the target) makes
    every claim strict. A ``claim_id`` must be live, ``agent``'s, ``write`` and cover
    ``target``. Every refusal has the reason ``claimed``.
    """
    claims = tuple(replace(c, strict=True) for c in claims) if strict else tuple(claims)
    target = normalize_target(target)
    live, _ = split_expired(claims, now)
    others = tuple(c for c in live if c.agent != agent and _touches(c, target))
    warnings = tuple(describe(c, now) for c in others if not c.strict)
    blocking = tuple(c for c in others if c.strict)
    refusal = _fence_refusal(claims, agent, target, claim_id, now) if claim_id else None
    if refusal is None and blocking:
        held = "; ".join(describe(c, now, mark_strict=False) for c in blocking)
        refusal = f"{target} is under {held}"
        refusal += " (strict) — wait for its release or expiry, then re-read"
    return WriteDecision(warnings, refusal, others)


def _touches(claim: Claim, target: str) -> bool:
    return any(targets_overlap(t, target) for t in claim.targets)


def describe(claim: Claim, now: float, *, mark_strict: bool = True) -> str:
    """``agent-a holds [strict ]write claim ID on TARGETS (N s left)``."""
    scope = ", ".join(claim.targets)
    strict = " strict" if claim.strict and mark_strict else ""
    left = claim.seconds_left(now)
    return f"{claim.agent} holds{strict} {claim.mode} claim {claim.id} on {scope} ({left} s left)"


def _fence_refusal(
    claims: tuple[Claim, ...], agent: str, target: str, claim_id: str, now: float
) -> str | None:
    claim = next((c for c in claims if c.id == claim_id), None)
    if claim is None or not claim.is_live(now):
        state = "expired" if claim else "not a live claim"
        return f"claim {claim_id} is {state} — claim {target} again and re-read before writing"
    if claim.agent != agent:
        return f"claim {claim_id} belongs to {claim.agent}, not {agent} — write under your own"
    if claim.mode != "write":
        return f"claim {claim_id} is a read claim — claim {target} with --mode write"
    if not any(covers(t, target) for t in claim.targets):
        return f"claim {claim_id} does not cover {target} — claim {target} or drop --claim"
    return None
