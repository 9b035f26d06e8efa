"""``Memory.work``: work items with an atomic claim-next, the Python API's sub-façade over
``ops.work`` (docs/reference.md §4.33)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Protocol

    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.claimwaits import Cancel
    from memkeeper.ops.work import WorkQueue
    from memkeeper.ops.workedits import WorkEdits
    from memkeeper.ops.workspace import Workspace
    from memkeeper.work.blocked import Blocker
    from memkeeper.work.items import Item

    class Memory(Protocol):
        """What ``Work`` needs of a ``Memory`` (``Memory.work`` makes one)."""

        @property
        def workspace(self) -> Workspace: ...


__all__ = ["Work"]


class Work:
    """The work queue, as the identity a ``Memory`` acts as takes from it."""

    def __init__(self, memory: Memory) -> None:
        self._ws = memory.workspace

    def _queue(self) -> WorkQueue:
        from memkeeper.ops.work import WorkQueue

        return WorkQueue(self._ws)

    def add(
        self,
        title: str,
        *,
        paths: Sequence[str] = (),
        priority: int = 0,
        after: Sequence[int] = (),
        body: str = "",
    ) -> Item:
        """A new open item; ``after``: the ids of items that must be done first."""
        return self._queue().add(title, paths=paths, priority=priority, after=after, body=body)

    def list(self, *, ready: bool = False) -> list[Item]:
        """Every item by id; ``ready``: the ready ones, in the order ``next`` hands them out."""
        return self._queue().listing(ready=ready)

    def show(self, item_id: int) -> Item:
        return self._queue().show(item_id)

    def next(
        self, *, ttl: float | None = None, wait: float | None = None, cancel: Cancel | None = None
    ) -> tuple[Item, Claim]:
        """Take the highest-priority ready item whose paths can be claimed now, with its claim
        (``Busy`` if none; ``wait``: block up to that many seconds for one)."""
        return self._queue().take(ttl, wait, cancel)

    def done(self, item_id: int, verify: Sequence[str] = (), *, claim: str | None = None) -> Item:
        """Complete the item's claim with evidence (``verify``: commands that must pass)."""
        return self._queue().done(item_id, verify, claim)

    def fail(self, item_id: int, reason: str, *, claim: str | None = None) -> Item:
        return self._queue().fail(item_id, reason, claim)

    def give_back(self, item_id: int, *, claim: str | None = None) -> Item:
        """``work return``: back to the pool, its claim released."""
        return self._queue().give_back(item_id, claim)

    def _edits(self) -> WorkEdits:
        from memkeeper.ops.workedits import WorkEdits

        return WorkEdits(self._ws)

    def edit(
        self,
        item_id: int,
        *,
        expect_rev: int,
        title: str | None = None,
        priority: int | None = None,
        paths: Sequence[str] | None = None,
        after: Sequence[int] | None = None,
        body: str | None = None,
    ) -> Item:
        """Change an item whose ``rev`` is still ``expect_rev`` (``Conflict`` otherwise);
        ``None``: leave as it is. A claimed item's paths and ``after`` are refused."""
        from memkeeper.work.edits import Changes

        changes = Changes(
            title, priority, None if paths is None else tuple(paths),
            None if after is None else tuple(after), body,
        )  # fmt: skip
        return self._edits().edit(item_id, expect_rev, changes)

    def retry(self, item_id: int) -> Item:
        """A failed item back in the pool; the items that wait on it follow."""
        return self._edits().retry(item_id)

    def blockers(self, item_id: int) -> tuple[Blocker, ...]:
        """Why an open item is not ready: the failed items it waits on (none: it is not
        blocked)."""
        return self._edits().blockers(item_id)

    def board(self) -> dict[str, Any]:
        """Who works on what (idle marks), the ready list and counts: the dashboard's view."""
        from memkeeper.ops.workboard import work_board

        return work_board(self._ws)

    def wait(self, item_id: int, timeout: float | None = None) -> Item:
        """Block until the item is done or failed."""
        return self._queue().wait(item_id, timeout)
