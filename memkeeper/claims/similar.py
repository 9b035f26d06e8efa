"""Claims compared by meaning (docs/reference.md §4 "Similar objectives"): pure rules.

A vector is an objective's embedding (``fs.embedding`` makes them, with the ``semantic``
extra); a score is the cosine of two vectors, from -1 to 1. A new claim's objective is
compared with the objectives of the live claims of *other* agents; each whose score reaches
the policy's ``semantic.threshold`` earns the new claim a warning naming it. A warning only:
targets alone decide who may hold what. ``claims --search`` ranks live claims by the score of
their objective against a query.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from memkeeper.claims.wording import claim_json
from memkeeper.records import Record

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from memkeeper.claims.decisions import Claim

Vector = tuple[float, ...]


class Match(Record):
    """A live claim and how close its objective is to the one compared (``score``). A
    ``Record``, not a dataclass: this module is imported by every ``claim``."""

    __slots__ = ("claim", "score")
    claim: Claim
    score: float

    def __init__(self, claim: Claim, score: float) -> None:
        self._fill(claim, score)


def score(a: Vector, b: Vector) -> float:
    """The cosine of two vectors (0 where either is all zeros: an objective of no known word).
    Symmetric to the last bit: each term's product commutes."""
    if len(a) != len(b):
        raise ValueError(f"vectors of {len(a)} and {len(b)} dimensions cannot be compared")
    unit_a, unit_b = _unit(a), _unit(b)
    if unit_a is None or unit_b is None:
        return 0.0
    cosine = math.fsum(x * y for x, y in zip(unit_a, unit_b, strict=True))
    return max(-1.0, min(1.0, cosine))


def _unit(v: Vector) -> list[float] | None:
    """``v`` at length 1 (None: all zeros). Divided by its largest component first: its norm
    is then between 1 and its dimension's root, where ``hypot`` loses nothing — the norm of
    subnormal components (5e-324 each) would be rounded to a multiple of 5e-324."""
    peak = max(map(abs, v), default=0.0)
    if peak == 0.0:
        return None
    scaled = [x / peak for x in v]
    norm = math.hypot(*scaled)
    return [x / norm for x in scaled]


def has_objective(claim: Claim) -> bool:
    return bool(claim.objective.strip())


def comparable(new: Claim, live: Iterable[Claim]) -> list[Claim]:
    """The live claims ``new`` is compared with: other agents' claims that have an objective
    (none when ``new`` has none). An agent's own claims are its own business."""
    if not has_objective(new):
        return []
    return [c for c in live if c.id != new.id and c.agent != new.agent and has_objective(c)]


def ranked(query: Vector, others: Sequence[tuple[Claim, Vector]]) -> list[Match]:
    """Every claim with its score against ``query``, highest first (ties: older claim first)."""
    found = [Match(claim, score(query, vector)) for claim, vector in others]
    return sorted(found, key=lambda m: (-m.score, m.claim.token))


def overlaps(
    query: Vector, others: Sequence[tuple[Claim, Vector]], threshold: float
) -> list[Match]:
    """The claims whose objective scores at least ``threshold`` against ``query``."""
    return [m for m in ranked(query, others) if m.score >= threshold]


def shown(value: float) -> str:
    """A score as answers show it: two decimals."""
    return f"{value:.2f}"


def match_json(match: Match, now: float) -> dict[str, Any]:
    """A search result: the claim as ``claims`` shows it, and its score (rounded to 3 places)."""
    return {**claim_json(match.claim, now), "score": round(match.score, 3)}


def overlap_warning(match: Match, threshold: float) -> str:
    """The warning a new claim gets for a live claim with a similar objective."""
    c = match.claim
    return (
        f"objective similar to claim {c.id} of {c.agent} (score {shown(match.score)}, "
        f"threshold {shown(threshold)}): {c.objective.strip()!r} on {', '.join(c.targets)} — "
        f"granted all the same; check with {c.agent} that you are not doing the same work"
    )


def skipped_warning(why: str) -> str:
    """The warning when the objectives could not be compared (the model would not load)."""
    return f"objectives not compared with other claims': {why} — the claim is granted all the same"
