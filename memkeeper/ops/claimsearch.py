"""``claims --search`` (docs/reference.md §4 "Similar objectives"): live claims ranked by the
meaning of their objective, with the ``semantic`` extra (``fs.embedding``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.claims import similar
from memkeeper.errors import Invalid

if TYPE_CHECKING:
    from memkeeper.claims.similar import Match
    from memkeeper.ops.workspace import Workspace

SEARCH_LIMIT = 10


def search(ws: Workspace, text: str, limit: int = SEARCH_LIMIT) -> list[Match]:
    """The live claims with an objective, ranked by its similarity to ``text``, best first,
    at most ``limit``. ``Invalid`` without the extra, for an empty text or a limit below 1."""
    if not text.strip():
        raise Invalid(
            "claims --search needs words to look for — e.g. --search 'retry behaviour'",
            reason="empty_search",
        )
    if limit < 1:
        raise Invalid(f"--limit must be 1 or more, not {limit} — e.g. --limit 5")
    from memkeeper.fs import embedding

    embedding.require("claims --search")
    from memkeeper.ops.claimviews import live

    held = [c for c in live(ws)[0] if similar.has_objective(c)]
    if not held:
        return []
    query = embedding.embed(text)
    vectors = embedding.embed_all([c.objective for c in held])
    return similar.ranked(query, list(zip(held, vectors, strict=True)))[:limit]
