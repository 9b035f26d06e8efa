"""Joint claims (docs/reference.md §4.32, ``join``): a claim a meeting resolved by ``join``
is held by all its participants — for the writes it covers, each of them counts as its
holder. On the path of every write check (``ops.claimwrites``): the meetings are read only
when another identity's claim touches the target, so a write nobody else claims pays
nothing.
"""

from __future__ import annotations

from dataclasses import replace

from memkeeper.claims.targets import normalize_target, targets_overlap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.workspace import Workspace


def joint_claims(ws: Workspace) -> dict[str, tuple[str, ...]]:
    """Claim id -> the participants who share it."""
    out: dict[str, tuple[str, ...]] = {}
    for m in ws.store.meetings.meetings(resolved=True):
        for claim_id in m.joint:
            out[claim_id] = tuple(dict.fromkeys((*out.get(claim_id, ()), *m.participants)))
    return out


def as_seen_by(ws: Workspace, claims: list[Claim], target: str) -> list[Claim]:
    """``claims`` as this identity's write of ``target`` sees them: a joint claim it shares
    counts as its own."""
    me, target = ws.agent, normalize_target(target)
    if not any(
        c.agent != me and any(targets_overlap(t, target) for t in c.targets) for c in claims
    ):
        return claims
    return shared(ws, claims)


def shared(ws: Workspace, claims: Sequence[Claim]) -> list[Claim]:
    """``claims``, each joint one this identity shares as its own (the gate's view: it judges
    many targets at once)."""
    me = ws.agent
    if all(c.agent == me for c in claims):
        return list(claims)
    joint = joint_claims(ws)
    return [replace(c, agent=me) if me in joint.get(c.id, ()) else c for c in claims]
