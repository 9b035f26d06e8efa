"""Changing a work item after it was added (docs/reference.md §4.33), pure: ``edited`` (its
title, priority, paths, ``after`` and body — each checked as ``work add`` checks it, cycles of
``after`` refused) and ``retried`` (a failed item back in the pool; its dependents follow,
since readiness is read from their ``after``).

What may change depends on where the item stands: an open or failed item, anything; a claimed
one, its title, priority and body only — its claim covers its paths, and it was ready when it
was taken, so neither its paths nor its ``after`` can change until it is back in the pool; a
done one, nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memkeeper.claims.targets import normalize_target
from memkeeper.errors import Invalid, Refused
from memkeeper.work import rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.work.items import Item


@dataclass(frozen=True, slots=True)
class Changes:
    """What ``work edit`` sets; ``None``: leave as it is."""

    title: str | None = None
    priority: int | None = None
    paths: tuple[str, ...] | None = None
    after: tuple[int, ...] | None = None
    body: str | None = None

    def named(self) -> list[str]:
        return [
            k
            for k in ("title", "priority", "paths", "after", "body")
            if getattr(self, k) is not None
        ]


def edited(item: Item, changes: Changes, known: Mapping[int, Item]) -> Item:
    """``item`` with ``changes`` (``rev`` raised when anything differs; the item itself when
    nothing does); ``Invalid`` for bad values, a done item or no change named, ``Refused``
    for a claimed item's paths or ``after``. ``known``: every item ``after`` may name."""
    if not changes.named():
        raise Invalid(
            "nothing to edit — give one of --title, --priority, --paths, --after, --body-file"
        )
    if item.state == "done":
        raise Invalid(f"work item {item.id} is done — a done item does not change", reason="done")
    if item.state == "claimed":
        _check_claimed(item, changes)
    draft = rules.added(
        item.id,
        item.title if changes.title is None else changes.title,
        item.created_by,
        item.created_at,
        paths=item.paths if changes.paths is None else changes.paths,
        priority=item.priority if changes.priority is None else changes.priority,
        after=item.after if changes.after is None else changes.after,
        body=item.body if changes.body is None else changes.body,
        known={**known, item.id: item},
    )
    fields = {"title": draft.title, "priority": draft.priority, "paths": draft.paths}
    fields |= {"after": draft.after, "body": draft.body}
    if all(getattr(item, k) == v for k, v in fields.items()):
        return item
    return replace(item, rev=item.rev + 1, **fields)  # type: ignore[arg-type]


def _check_claimed(item: Item, changes: Changes) -> None:
    moved = []
    if changes.paths is not None:
        paths = tuple(dict.fromkeys(normalize_target(p) for p in changes.paths))
        moved += ["--paths"] if paths != item.paths else []
    if changes.after is not None and tuple(dict.fromkeys(changes.after)) != item.after:
        moved.append("--after")
    if moved:
        raise Refused(
            f"work item {item.id} is claimed by {item.agent} (claim {item.claim}): its "
            f"{' and '.join(n[2:] for n in moved)} cannot change while it is — only --title, "
            "--priority and --body-file can; change the rest once it is back in the pool "
            f"(memkeeper work return {item.id}, by its holder)",
            reason="claimed",
        )


def retried(item: Item) -> Item:
    """A failed item back in the pool (``Invalid`` for any other)."""
    if item.state != "failed":
        raise Invalid(
            f"work item {item.id} is {item.state}, not failed — only a failed item is retried"
            + (f"; to give up a claimed one, its holder runs: memkeeper work return {item.id}"
               if item.state == "claimed" else ""),
            reason=item.state,
        )  # fmt: skip
    return replace(item, rev=item.rev + 1, state="open", ended_at=None, reason="retried")
