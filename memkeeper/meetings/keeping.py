"""Which resolved meetings the store keeps (docs/reference.md §4.32): a resolved meeting is
dropped once it ended more than ``keep_days`` ago, and beyond the newest ``keep`` resolved
ones whatever its age; an open, escalated or serializing meeting never is. Pure."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

DAY_S = 24 * 3600.0


def to_trim(
    kept: Sequence[tuple[int, float | None]], now: float, keep_days: int, keep: int
) -> list[int]:
    """The ids to drop, of ``kept`` — the resolved meetings, ``(id, ended_at)`` oldest id
    first (``ended_at`` None: a record from before it was kept; judged by the count alone)."""
    before = now - keep_days * DAY_S
    old = {mid for mid, ended in kept if ended is not None and ended < before}
    old.update(mid for mid, _ in kept[: max(0, len(kept) - keep)])
    return sorted(old)
