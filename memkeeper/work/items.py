"""A work item's record (docs/reference.md §4.33): what is to be done (a title, a body), where
(the paths its claim will cover), how urgent (``priority``), after what (``after``: the items
that must be done first), and where it stands: ``open`` → ``claimed`` → ``done`` | ``failed``,
a claimed item ``returned`` to ``open`` when its claim ends without it. Pure: records and
their JSON.

``claim`` and ``agent`` name the item's claim and its holder while it is claimed, and the last
ones once it is not (who did it, who failed it, whose claim ended): the refusal of a late
``done`` names them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal

from memkeeper.events import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

State = Literal["open", "claimed", "done", "failed"]
STATES: tuple[State, ...] = ("open", "claimed", "done", "failed")
ENDED: tuple[State, ...] = ("done", "failed")


@dataclass(frozen=True, slots=True)
class Item:
    """``rev`` rises with every change; ``claimed_at``/``ended_at`` are seconds on the claims'
    clock; ``returns``: how often a claim of it ended without it."""

    id: int
    rev: int
    title: str
    state: State
    created_by: str
    created_at: float
    paths: tuple[str, ...] = ()
    priority: int = 0
    after: tuple[int, ...] = ()
    body: str = ""
    claim: str | None = None
    agent: str | None = None
    claimed_at: float | None = None
    ended_at: float | None = None
    reason: str = ""
    returns: int = 0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["paths"], out["after"] = list(self.paths), list(self.after)
        out["created_at"] = iso_utc(self.created_at)
        for name in ("claimed_at", "ended_at"):
            value = out[name]
            out[name] = None if value is None else iso_utc(value)
        return out


def encode(item: Item) -> str:
    """The record as the stores keep it: compact JSON, times as numbers."""
    return json.dumps(asdict(item), separators=(",", ":"), ensure_ascii=False)


def decode(text: str | bytes) -> Item:
    raw = json.loads(text)
    raw["paths"], raw["after"] = tuple(raw["paths"]), tuple(raw["after"])
    return Item(**raw)
