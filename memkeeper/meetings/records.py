"""A meeting's record (docs/reference.md §4.32): an overlap between agents' claims, open until
someone resolves it — who takes part, what is contested, the plans proposed and who accepted
each, the deadline, and the revision every change raises. Pure: records and their JSON.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from memkeeper.events import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

State = Literal["open", "escalated", "serializing", "resolved"]
Kind = Literal["split", "serialize", "handoff", "join", "escalate"]
KINDS: tuple[Kind, ...] = ("split", "serialize", "handoff", "join", "escalate")
STATES: tuple[State, ...] = ("open", "escalated", "serializing", "resolved")


@dataclass(frozen=True, slots=True)
class Plan:
    """A way out of the overlap. ``split``: ``assign`` gives each participant its sub-targets
    (paths or ``FILE#KEY`` sections within the contested ones); ``serialize``: ``who`` goes
    first, the others wait; ``handoff``: the contested targets go to ``who``; ``join``: one
    claim held by all; ``escalate``: a human decides."""

    kind: Kind
    assign: tuple[tuple[str, tuple[str, ...]], ...] = ()
    who: str | None = None
    note: str = ""

    def assigned(self, agent: str) -> tuple[str, ...]:
        return next((targets for name, targets in self.assign if name == agent), ())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "note": self.note}
        if self.assign:
            out["assign"] = {name: list(targets) for name, targets in self.assign}
        if self.who is not None:
            out["who"] = self.who
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Plan:
        assign = tuple((name, tuple(t)) for name, t in raw.get("assign", {}).items())
        return cls(raw["kind"], assign, raw.get("who"), raw.get("note", ""))


@dataclass(frozen=True, slots=True)
class Offer:
    """A plan proposed in a meeting (numbered from 1), and who has accepted it (its proposer
    first)."""

    n: int
    by: str
    at: float
    plan: Plan
    accepted_by: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "by": self.by,
            "at": iso_utc(self.at),
            **self.plan.to_json(),
            "accepted_by": list(self.accepted_by),
        }


@dataclass(frozen=True, slots=True)
class Meeting:
    """``claims``: the claim ids in contention when it opened; ``rev`` rises with every change
    (compare-and-swap: ``--expect-rev``); ``owners``: whom CODEOWNERS names for the contested
    paths, once escalated; ``resolution``: the plan that closed it. A ``serialize`` keeps it
    ``serializing`` while the participants take their turns (``meetings.turns``): ``order``
    (who goes first, then the others), ``turn`` (the index in it of who holds now),
    ``standing`` (each waiting participant's live claims at the resolution), ``skipped``
    (who was passed over, and why), ``settled_at`` (when the last turn was given)."""

    id: int
    rev: int
    state: State
    opened_by: str
    opened_at: float
    deadline: float
    participants: tuple[str, ...]
    targets: tuple[str, ...]
    claims: tuple[str, ...] = ()
    reason: str = ""
    offers: tuple[Offer, ...] = ()
    owners: tuple[str, ...] = ()
    resolution: Plan | None = None
    resolved_by: str | None = None
    resolved_at: float | None = None
    joint: tuple[str, ...] = field(default=())  # join: the claim ids held by all participants
    order: tuple[str, ...] = ()
    turn: int = 0
    standing: tuple[tuple[str, tuple[str, ...]], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    settled_at: float | None = None
    strict: bool = False  # a serialize: whether each turn's grant is strict

    def standing_of(self, agent: str) -> tuple[str, ...]:
        return next((ids for name, ids in self.standing if name == agent), ())

    @property
    def ended_at(self) -> float | None:
        """When it stopped changing: resolved (a serialize: its last turn given)."""
        if self.state != "resolved":
            return None
        return self.settled_at if self.settled_at is not None else self.resolved_at

    def offer(self, n: int) -> Offer | None:
        return next((o for o in self.offers if o.n == n), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rev": self.rev,
            "state": self.state,
            "opened_by": self.opened_by,
            "opened_at": iso_utc(self.opened_at),
            "deadline": iso_utc(self.deadline),
            "participants": list(self.participants),
            "targets": list(self.targets),
            "claims": list(self.claims),
            "reason": self.reason,
            "proposals": [o.to_json() for o in self.offers],
            "owners": list(self.owners),
            "resolution": None if self.resolution is None else self.resolution.to_json(),
            "resolved_by": self.resolved_by,
            "resolved_at": None if self.resolved_at is None else iso_utc(self.resolved_at),
            "joint": list(self.joint),
            "order": list(self.order),
            "turn": self.turn,
            "standing": {name: list(ids) for name, ids in self.standing},
            "skipped": [{"agent": name, "reason": why} for name, why in self.skipped],
            "settled_at": None if self.settled_at is None else iso_utc(self.settled_at),
        }


def encode(m: Meeting) -> str:
    """The record as the stores keep it: compact JSON, times as numbers."""
    raw = asdict(m)
    return json.dumps(raw, separators=(",", ":"), ensure_ascii=False)


def decode(text: str | bytes) -> Meeting:
    raw = json.loads(text)
    offers = tuple(
        Offer(o["n"], o["by"], o["at"], _plan(o["plan"]), tuple(o["accepted_by"]))
        for o in raw.pop("offers")
    )
    resolution = raw.pop("resolution")
    tuples = ("participants", "targets", "claims", "owners", "joint", "order")
    fields: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in raw.items()}
    fields["standing"] = tuple((name, tuple(ids)) for name, ids in raw.get("standing", ()))
    fields["skipped"] = tuple((name, why) for name, why in raw.get("skipped", ()))
    meeting = Meeting(**fields, offers=offers)
    return replace(meeting, resolution=None if resolution is None else _plan(resolution))


def _plan(raw: dict[str, Any]) -> Plan:
    assign = tuple((name, tuple(targets)) for name, targets in raw["assign"])
    return Plan(raw["kind"], assign, raw["who"], raw["note"])
