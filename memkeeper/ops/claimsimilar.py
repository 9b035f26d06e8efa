"""Claims compared by meaning, with the ``semantic`` extra (docs/reference.md §4 "Similar
objectives"): the warning a granted claim gets (``claims --search``: ``ops.claimsearch``).

Cheap to import, and cheap when it has nothing to do: the model (``fs.embedding``) is loaded
only when the extra is installed, the new claim has an objective and another agent's live
claim has one too. Vectors are not stored: embedding an objective takes tens of microseconds
once the model is loaded (~0.1 s, paid by any comparison whatever is cached), so a store
holding them would save nothing and cost every claim a larger record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.workspace import Workspace


def overlap_warnings(ws: Workspace, claim: Claim, live: Sequence[Claim]) -> tuple[str, ...]:
    """The warnings ``claim`` (just granted) gets for other agents' live claims whose
    objective is similar to its own; none without the extra. Never raises for the model: a
    model that will not load is a warning too — the claim stands."""
    if not claim.objective.strip():
        return ()  # nothing to compare, nothing imported: a claim without objective is as before
    from memkeeper.claims import similar

    others = similar.comparable(claim, live)
    if not others:
        return ()
    from memkeeper.fs import embedding

    if not embedding.available():
        return ()
    threshold = ws.semantic_threshold()
    try:
        query = embedding.embed(claim.objective)
        vectors = embedding.embed_all([c.objective for c in others])
    except embedding.ModelBroken as err:
        return (similar.skipped_warning(err.message),)
    found = similar.overlaps(query, list(zip(others, vectors, strict=True)), threshold)
    return tuple(similar.overlap_warning(m, threshold) for m in found)
