"""How many of each section's bodies — the bases of three-way merges — a store keeps: the last
``KEEP_BODIES`` revs at least, the older ones forgotten every ``PRUNE_EVERY`` revs (one
statement or range delete less per write), so between ``KEEP_BODIES`` and
``KEEP_BODIES + PRUNE_EVERY - 1``. One rule for both backends; pure."""

from __future__ import annotations

KEEP_BODIES = 100  # bodies kept per section: revs N-99 … N, at least
PRUNE_EVERY = 16  # revs between prunes of a section's old bodies


def prune_cut(rev: int) -> int | None:
    """When a section reaches ``rev``: the rev up to which its older bodies go now (its
    constants read at each call), or None when no prune is due."""
    cut = rev - KEEP_BODIES
    return cut if cut > 0 and cut % PRUNE_EVERY == 0 else None
