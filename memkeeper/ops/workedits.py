"""Changing work items after they were added (docs/reference.md §4.33): ``edit`` (a
compare-and-swap on the item's ``rev``, as ``patch`` is on a section's), ``retry`` (a failed
item back in the pool) and ``blockers`` (why an open item is not ready). The rules are
``work.edits`` and ``work.blocked``; each call is one work transaction (``WorkQueue.round``),
its event recorded by the agent that made the change."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.errors import Conflict
from memkeeper.ops.work import WorkQueue
from memkeeper.work import blocked, edits

if TYPE_CHECKING:
    from memkeeper.work.blocked import Blocker
    from memkeeper.work.edits import Changes
    from memkeeper.work.items import Item


class WorkEdits(WorkQueue):
    def edit(self, item_id: int, expect_rev: int, changes: Changes) -> Item:
        """The item with ``changes`` if its ``rev`` is still ``expect_rev`` (else
        ``Conflict``, ``current``: the item as it is); ``work.edited`` names what changed."""
        if changes.paths is not None:
            from memkeeper.ops.claimwrites import resolve_target

            paths = tuple(resolve_target(self.ws, p) for p in changes.paths)
            changes = replace(changes, paths=paths)

        def once() -> Item:
            with self.round():
                item = self._item(item_id)
                if item.rev != expect_rev:
                    raise _stale(item, expect_rev)
                deps = item.after if changes.after is None else changes.after
                changed = edits.edited(item, changes, self._known(deps))
                if changed is item:
                    return item
                named = [k for k in changes.named() if getattr(changed, k) != getattr(item, k)]
                self._put(changed)
                self._log("work.edited", changed, {"changed": named, "after": list(changed.after)},
                          actor=self.ws.agent)  # fmt: skip
                return changed

        return self.ws.again(once)

    def retry(self, item_id: int) -> Item:
        """A failed item open again (``work.retried``): ready once its own ``after`` are
        done, and the items that wait on it follow."""

        def once() -> Item:
            with self.round():
                item = self._put(edits.retried(self._item(item_id)))
                self._log("work.retried", item, {}, actor=self.ws.agent)
                return item

        return self.ws.again(once)

    def blockers(self, item_id: int) -> tuple[Blocker, ...]:
        """The failed items an open item waits on (none: it is not blocked)."""

        def once() -> tuple[Blocker, ...]:
            with self.round():
                item = self._item(item_id)
                return blocked.blockers(item, {i.id: i for i in self.items})

        return self.ws.again(once)

    def _known(self, after: tuple[int, ...]) -> dict[int, Item]:
        known = {i.id: i for i in self.items}
        for dep in set(after) - set(known):  # a done item: read alone
            found = self.store.work.work_item(dep)
            if found is not None:
                known[dep] = found
        return known


def _stale(item: Item, expected: int) -> Conflict:
    return Conflict(
        f"work item {item.id} is at rev {item.rev}, not {expected}: it changed since you read "
        f"it — read it again (memkeeper work show {item.id}) and edit with --expect-rev "
        f"{item.rev}",
        reason="stale_revision",
        expected={"rev": expected},
        current=item,
        recover=f"memkeeper work show {item.id}",
    )
