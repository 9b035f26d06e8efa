"""Why an open item is not ready (docs/reference.md §4.33): it depends — directly, or through
open items that wait too — on an item that failed, and will not be ready until that one is
retried (``work retry``). Pure."""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from memkeeper.work.items import Item


@dataclass(frozen=True, slots=True)
class Blocker:
    """A failed item ``id`` (its ``reason``) that an open item waits on, ``through`` the item
    of its own ``after`` that leads there (``None``: it depends on ``id`` itself)."""

    id: int
    reason: str
    through: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "reason": self.reason, "through": self.through}

    def words(self) -> str:
        via = "" if self.through is None else f" (through #{self.through})"
        why = f" ({self.reason})" if self.reason else ""
        return f"depends on #{self.id}{via}, which failed{why}"


def blockers(item: Item, by_id: Mapping[int, Item]) -> tuple[Blocker, ...]:
    """The failed items ``item`` waits on (by id), if it is open; ``by_id`` holds at least
    every item not done (an item it lacks is done, as ``rules.ready`` reads it)."""
    if item.state != "open":
        return ()
    found: dict[int, Blocker] = {}
    for first in item.after:
        seen: set[int] = {item.id}
        todo = [first]
        while todo:
            dep = by_id.get(todo.pop())
            if dep is None or dep.id in seen or dep.state == "done":
                continue
            seen.add(dep.id)
            if dep.state == "failed":
                through = None if dep.id == first else first
                found.setdefault(dep.id, Blocker(dep.id, dep.reason, through))
            elif dep.state == "open":
                todo.extend(dep.after)
    return tuple(found[k] for k in sorted(found))


def blocked_map(items: Iterable[Item]) -> dict[int, tuple[Blocker, ...]]:
    """Each blocked item of ``items`` (which hold every item not done) and its blockers."""
    listed = list(items)
    by_id = {i.id: i for i in listed}
    found = {i.id: blockers(i, by_id) for i in listed}
    return {k: v for k, v in found.items() if v}


def sentence(found: tuple[Blocker, ...]) -> str:
    """``blocked: depends on #3, which failed (tests red); depends on …``."""
    return "blocked: " + "; ".join(b.words() for b in found)
