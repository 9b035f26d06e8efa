"""Which ended work items the store keeps (docs/reference.md §4.33): a done or failed item is
dropped once it ended more than the policy's ``work.keep_days`` ago, and beyond the newest
``work.keep`` ended ones whatever its age — but never while an item not done depends on it
(its ``after`` names it): a dependent's "blocked" and its ``after`` keep meaning something.
The store is trimmed by ``work add``, every ``TRIM_EVERY``-th item, at most ``MAX_DROP``
items at a time (oldest first: more than the adds between two trims, so it keeps up). Pure."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from memkeeper.work.items import Item

DAY_S = 24 * 3600.0
TRIM_EVERY = 16  # adds between trims: reading every ended item on each add costs too much
MAX_DROP = 20  # items one trim drops at most (an etcd transaction holds 128 operations)


def due(new_id: int) -> bool:
    """Whether the add of item ``new_id`` trims the store."""
    return new_id % TRIM_EVERY == 0


def to_trim(
    ended: Sequence[tuple[int, float | None]],
    unfinished: Iterable[Item],
    now: float,
    keep_days: int,
    keep: int,
) -> list[int]:
    """The ids to drop of ``ended`` — every done or failed item, ``(id, ended_at)`` — given
    the items not done (``unfinished``: open, claimed, failed — a failed one may be retried),
    whose ``after`` protect what they name."""
    protected = {dep for item in unfinished for dep in item.after}
    ordered = sorted(ended)
    before = now - keep_days * DAY_S
    old = {i for i, at in ordered if at is not None and at < before}
    old.update(i for i, _ in ordered[: max(0, len(ordered) - keep)])
    return sorted(old - protected)[:MAX_DROP]
