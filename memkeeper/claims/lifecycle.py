"""A claim's record and its states (docs/reference.md §4 "Claim records"): pure rules over
frozen data, no I/O — the shell stores what they return.

A record is what a claim announces (``Plan``: branch, worktree, base commit, memory sections,
tests) and what became of it: its state, a revision bumped by every change, its history, and
at the end its evidence. States::

    active → completed | abandoned | expired | released | suspended
    suspended → active | abandoned
    abandoned | expired → taken-over

``completed``, ``released`` and ``taken-over`` are terminal: nothing leaves them. Only an
``active`` record has a live claim (the claim table's row, which holds the plan); every other
one is kept as a record, out of the live set. Until its first change a live claim's record is
the one ``open_record`` makes of its row: the store keeps records from their first change on.
Renewing changes liveness only, never the record or its revision.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any, Literal, cast

from memkeeper import limits
from memkeeper.claims.evidence import Evidence
from memkeeper.claims.plan import Plan
from memkeeper.errors import Conflict, Invalid, Refused

if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.claims.decisions import Claim

State = Literal[
    "active", "suspended", "completed", "abandoned", "expired", "released", "taken-over"
]
STATES: tuple[State, ...] = (
    "active", "suspended", "completed", "abandoned", "expired", "released", "taken-over",
)  # fmt: skip
NEXT: Mapping[State, frozenset[State]] = {
    "active": frozenset({"completed", "abandoned", "expired", "released", "suspended"}),
    "suspended": frozenset({"active", "abandoned"}),
    "abandoned": frozenset({"taken-over"}),
    "expired": frozenset({"taken-over"}),
    "completed": frozenset(),
    "released": frozenset(),
    "taken-over": frozenset(),
}
TERMINAL = frozenset(state for state, nxt in NEXT.items() if not nxt)
# the event each transition leaves (the state a record enters → ``claim.<verb>``)
EVENTS: Mapping[State, str] = {
    "active": "claim.resumed",
    "suspended": "claim.suspended",
    "completed": "claim.completed",
    "abandoned": "claim.abandoned",
    "expired": "claim.expired",
    "released": "claim.released",
    "taken-over": "claim.taken-over",
}
MAX_REASON_CHARS = 4096
MAX_NOTE_CHARS = 16 * 1024  # an abandon's --message to its taker (a message's bound)


@dataclass(frozen=True, slots=True)
class Step:
    """One change of a record: the revision it made, the state after it, when, by whom."""

    rev: int
    state: State
    at: str
    by: str
    what: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rev": self.rev,
            "state": self.state,
            "at": self.at,
            "by": self.by,
            "what": self.what,
        }


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    """A claim and what became of it. ``ended_at`` is on the claims' clock (the one expiry
    is judged by): a takeover's grace period counts from it."""

    id: str
    agent: str
    state: State
    rev: int
    token: int
    mode: str
    targets: tuple[str, ...]
    objective: str
    plan: Plan
    granted_at: str
    history: tuple[Step, ...] = ()
    ended_at: float | None = None
    reason: str = ""
    predecessor: str | None = None
    successor: str | None = None
    evidence: Evidence | None = field(default=None)

    @property
    def live(self) -> bool:
        return self.state == "active"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "state": self.state,
            "rev": self.rev,
            "token": self.token,
            "mode": self.mode,
            "targets": list(self.targets),
            "objective": self.objective,
            **self.plan.to_json(),
            "granted_at": self.granted_at,
            "ended_at": self.ended_at,
            "reason": self.reason,
            "predecessor": self.predecessor,
            "successor": self.successor,
            "evidence": None if self.evidence is None else self.evidence.to_json(),
            "history": [step.to_json() for step in self.history],
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> ClaimRecord:
        evidence = v.get("evidence")
        return cls(
            v["id"], v["agent"], cast("State", v["state"]), int(v["rev"]), int(v["token"]),
            v["mode"], tuple(v["targets"]), v["objective"], Plan.from_json(v), v["granted_at"],
            tuple(Step(**s) for s in v.get("history", ())), v.get("ended_at"),
            v.get("reason", ""), v.get("predecessor"), v.get("successor"),
            None if evidence is None else Evidence.from_json(evidence),
        )  # fmt: skip


def open_record(
    claim: Claim, plan: Plan, at: str, *, predecessor: str | None = None
) -> ClaimRecord:
    """The record of a claim just granted: ``active``, revision 1."""
    step = Step(1, "active", at, claim.agent, "claim.granted")
    return ClaimRecord(
        claim.id, claim.agent, "active", 1, claim.token, claim.mode, claim.targets,
        claim.objective, plan, at, (step,), predecessor=predecessor,
    )  # fmt: skip


def ended_body(
    claim: Claim,
    plan: Plan,
    granted_at: str,
    to: State,
    *,
    at: str,
    by: str,
    ended_at: float,
    reason: str = "",
) -> str:
    """``json.dumps(move(open_record(claim, plan, granted_at), to, …).to_json())``, written
    directly: the record of a claim not changed since its grant as it ends (a release, an
    expiry), what nearly every claim's end stores — without the dataclasses, the dict and the
    encoding of its keys on its way (tests/claims/test_lifecycle.py holds them equal)."""
    if to not in NEXT["active"]:
        raise ValueError(f"a live claim cannot end as {to!r}")
    s = encode_basestring_ascii
    agent, state, granted = s(claim.agent), s(to), s(granted_at)
    return (
        f'{{"id": {s(claim.id)}, "agent": {agent}, "state": {state}, "rev": 2, '
        f'"token": {int(claim.token)!r}, "mode": {s(claim.mode)}, '
        f'"targets": {_strings(claim.targets)}, "objective": {s(claim.objective)}, '
        f'"branch": {s(plan.branch)}, "worktree": {s(plan.worktree)}, "base": {s(plan.base)}, '
        f'"memory": {_strings(plan.memory)}, "tests": {_strings(plan.tests)}, '
        f'"granted_at": {granted}, "ended_at": {_number(ended_at)}, "reason": {s(reason)}, '
        '"predecessor": null, "successor": null, "evidence": null, "history": ['
        f'{{"rev": 1, "state": "active", "at": {granted}, "by": {agent}, '
        '"what": "claim.granted"}, '
        f'{{"rev": 2, "state": {state}, "at": {s(at)}, "by": {s(by)}, "what": {s(EVENTS[to])}}}]}}'
    )


def _strings(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(map(encode_basestring_ascii, items)) + "]"


def _number(x: float) -> str:
    return repr(x) if math.isfinite(x) else json.dumps(x)  # what json writes for a number


def check_rev(record: ClaimRecord, expect_rev: int | None) -> None:
    """``Conflict`` (exit 3, reason ``stale_revision``, the record as ``current``) unless
    ``expect_rev`` is None or the record's revision."""
    if expect_rev is None or expect_rev == record.rev:
        return
    raise Conflict(
        f"claim {record.id} is at rev {record.rev}, not {expect_rev} — it changed "
        f"({record.history[-1].what if record.history else 'claim.granted'}) since you read it",
        reason="stale_revision",
        expected={"rev": expect_rev},
        current=record,
        recover=f"memkeeper claim show {record.id}, then retry with --expect-rev {record.rev}",
    )


def check_holder(record: ClaimRecord, agent: str, verb: str) -> None:
    """``Refused`` (reason ``not_holder``) unless ``agent`` holds the claim."""
    if record.agent != agent:
        raise Refused(
            f"claim {record.id} is held by {record.agent}, not {agent} — only its holder may "
            f"{verb} it",
            reason="not_holder",
        )


def move(
    record: ClaimRecord,
    to: State,
    *,
    at: str,
    by: str,
    ended_at: float | None = None,
    **changes: Any,
) -> ClaimRecord:
    """The record in state ``to``, one revision on, the step in its history; ``Invalid``
    (reason ``claim_state``) for a transition the states do not allow."""
    check_move(record, to)
    rev = record.rev + 1
    step = Step(rev, to, at, by, EVENTS[to])
    ended = ended_at if to != "active" and ended_at is not None else record.ended_at
    return replace(
        record, state=to, rev=rev, history=(*record.history, step), ended_at=ended, **changes
    )


def check_move(record: ClaimRecord, to: State) -> None:
    """``Invalid`` (reason ``claim_state``) unless the record may move to ``to``."""
    if to not in NEXT[record.state]:
        raise Invalid(_not_allowed(record, to), reason="claim_state")


def rescope(record: ClaimRecord, targets: tuple[str, ...], token: int, *, at: str) -> ClaimRecord:
    """An ``active`` record with new targets (and the token of its new grant): one revision
    on, ``claim.scoped`` in its history."""
    if record.state != "active":
        raise Invalid(
            _not_allowed(record, "active", verb="change the scope of"), reason="claim_state"
        )
    rev = record.rev + 1
    step = Step(rev, "active", at, record.agent, "claim.scoped")
    return replace(record, targets=targets, token=token, rev=rev, history=(*record.history, step))


def check_takeover(record: ClaimRecord, agent: str, now: float, grace: float) -> None:
    """A takeover of ``record`` by ``agent`` at ``now`` (the claims' clock) is allowed: the
    record is abandoned or expired and ``grace`` seconds have passed since; else ``Invalid``
    (reason ``claim_state``, or ``grace`` with the seconds still to wait)."""
    if record.state not in ("abandoned", "expired"):
        what = "live" if record.state == "active" else record.state
        raise Invalid(
            f"claim {record.id} is {what}: only an abandoned or expired claim can be taken "
            "over — ask its holder to abandon it (memkeeper request-release)",
            reason="claim_state",
        )
    left = math.ceil((record.ended_at or now) + grace - now)
    if left > 0:
        raise Invalid(
            f"claim {record.id} {record.state} {math.floor(now - (record.ended_at or now))} s "
            f"ago; the policy's grace period (leases.takeover_grace: {grace:g} s) has "
            f"{left} s left — try again then",
            reason="grace",
            seconds_left=left,
        )


def reason_text(reason: str) -> str:
    """An abandon's reason, checked: required, bounded."""
    if not reason.strip():
        raise Invalid("abandon needs --reason TEXT: say why, for whoever takes it over")
    return limits.text(reason, "--reason", limit=MAX_REASON_CHARS)


def note_text(message: str) -> str:
    """An abandon's message to its taker (``--message``), checked: bounded; "" for none."""
    if not message.strip():
        return ""
    return limits.text(message, "--message", limit=MAX_NOTE_CHARS)


def _not_allowed(record: ClaimRecord, to: State, *, verb: str = "") -> str:
    if record.state in TERMINAL:
        return (
            f"claim {record.id} is {record.state}, which is final — take a new claim "
            f"(memkeeper claim …) instead"
        )
    doing = verb or f"move to {to}"
    allowed = ", ".join(sorted(NEXT[record.state])) or "nothing"
    return f"cannot {doing} claim {record.id}: it is {record.state} (it may become: {allowed})"
