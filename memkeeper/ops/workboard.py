"""The work queue at a glance (docs/reference.md §4.24, §4.33), the shell of ``work.board``:
one work transaction reads the items not done (settling any whose claim ended, as ``work
list`` does) and counts the done ones; the idle marks of the claimed items' live claims come
from the log (``ops.idleclaims``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memkeeper.ops.idleclaims import idle_marks, mark_json
from memkeeper.ops.work import WorkQueue
from memkeeper.work.board import board

if TYPE_CHECKING:
    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.workspace import Workspace
    from memkeeper.work.items import Item


def work_board(ws: Workspace) -> dict[str, Any]:
    """``work.board`` of the queue now (empty without a store)."""
    if not ws.has_store:
        return board([], 0, {})
    queue = WorkQueue(ws)

    def once() -> tuple[list[Item], int, list[Claim]]:
        with queue.round():
            done = len(ws.store.work.work_items(("done",)))
            claims = {i.claim for i in queue.items if i.state == "claimed"}
            return list(queue.items), done, [c for c in queue.held if c.id in claims]

    items, done, claims = ws.again(once)
    marks = idle_marks(ws, claims)
    return board(items, done, {c.id: mark_json(marks.get(c.id)) for c in claims})
