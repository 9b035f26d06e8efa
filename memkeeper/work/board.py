"""The work queue at a glance (docs/reference.md §4.24, §4.33): who works on what — each
claimed item with its holder, its claim, since when, and the watchdog's idle mark of that
claim — the ready list in the order ``work next`` hands it out, the blocked items (each
waiting on a failed one) and how many items stand in each state. Pure: the dashboard's
``/api/work`` is this of what one work transaction read.
"""

from __future__ import annotations

from memkeeper.events import iso_utc
from memkeeper.work import rules
from memkeeper.work.blocked import blocked_map

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from memkeeper.work.items import Item


def board(
    items: Sequence[Item], done: int, idle: Mapping[str, dict[str, Any] | None]
) -> dict[str, Any]:
    """``items``: every item not done, settled; ``done``: how many are; ``idle``: the idle
    mark (``ops.idleclaims.mark_json``) of each claimed item's claim that has one."""
    claimed = sorted(
        (i for i in items if i.state == "claimed"), key=lambda i: (i.claimed_at or 0.0, i.id)
    )
    ready = rules.ready_list(items)
    counts = {state: sum(1 for i in items if i.state == state) for state in ("open", "claimed")}
    counts |= {"ready": len(ready), "done": done}
    counts["failed"] = sum(1 for i in items if i.state == "failed")
    stuck = blocked_map(items)
    counts["blocked"] = len(stuck)
    return {
        "working": [_working(i, idle.get(i.claim or "")) for i in claimed],
        "ready": [_row(i) | {"position": n} for n, i in enumerate(ready, 1)],
        "blocked": [
            _row(i) | {"blocked": [b.to_json() for b in stuck[i.id]]}
            for i in items
            if i.id in stuck
        ],
        "counts": counts,
    }


def _row(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "paths": list(item.paths),
        "priority": item.priority,
        "after": list(item.after),
    }


def _working(item: Item, idle: dict[str, Any] | None) -> dict[str, Any]:
    since = None if item.claimed_at is None else iso_utc(item.claimed_at)
    return _row(item) | {"agent": item.agent, "claim": item.claim, "since": since, "idle": idle}
