"""Claims guarding commits and pushes: which other identities' live claims a set of changed
paths falls under, and what ``check --staged`` and ``check --push`` say of each (pure).

A change is a path the commit (or the pushed commits) adds, modifies or deletes — a rename
is both its names — with, for a Markdown file, the section keys it touches. A claim counts
when it is live, is not the committer's own (the same identity, or a sub-agent of it:
``AGENT:SESSION/SUB``) and covers a changed path: a path, directory or glob target covers
the file; a ``FILE#KEY`` target only a change that touches that section (or one nested
under it). A strict claim refuses, an advisory one warns; the policy's ``strict: true`` for
a file makes every claim on it strict, as it does for writes. Any mode counts: a commit is
a write, and a write conflicts with reads too.
"""

from __future__ import annotations

from dataclasses import dataclass

from memkeeper.claims.targets import covers
from memkeeper.events import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.claims.decisions import Claim


@dataclass(frozen=True, slots=True)
class Change:
    """One changed path: ``sections`` the keys it touches (None: unknown, the whole file),
    ``strict`` whether the policy makes every claim on it strict."""

    path: str
    sections: frozenset[str] | None = None
    strict: bool = False


@dataclass(frozen=True, slots=True)
class Hit:
    """Another identity's live claim over some changed paths; ``blocks``: strict."""

    claim: Claim
    paths: tuple[str, ...]
    blocks: bool


def own(claim_agent: str, actor: str) -> bool:
    """Whether a claim held by ``claim_agent`` is ``actor``'s (or a sub-agent's of it)."""
    return claim_agent == actor or claim_agent.startswith(actor + "/")


def touched(target: str, change: Change) -> bool:
    """Does ``change`` reach what ``target`` names?"""
    if "#" not in target or change.sections is None:
        return covers(target.partition("#")[0], change.path)
    return any(covers(target, f"{change.path}#{key}") for key in change.sections)


def judge(changes: Iterable[Change], claims: Iterable[Claim], actor: str, now: float) -> list[Hit]:
    """The claims ``changes`` fall under, in the claims' order, each with its paths."""
    changes = tuple(changes)
    hits = []
    for claim in claims:
        if own(claim.agent, actor) or not claim.is_live(now):
            continue
        reached = [c for c in changes if any(touched(t, c) for t in claim.targets)]
        if reached:
            blocks = claim.strict or any(c.strict for c in reached)
            paths = tuple(dict.fromkeys(c.path for c in reached))
            hits.append(Hit(claim, paths, blocks))
    return hits


# -- what is said -------------------------------------------------------------------------

_SHOWN = 5  # paths named before "and N more"


def what(hit: Hit, now: float, doing: str) -> str:
    """``this commit changes P, Q, under codex:T's strict write claim ID on TARGETS until
    STAMP (N s left): "objective"`` (``doing``: "this commit changes", "the push carries")."""
    c, paths = hit.claim, hit.paths
    named = ", ".join(paths[:_SHOWN]) + (
        f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    )
    kind = "strict " if hit.blocks else ""
    until = f"until {iso_utc(c.expires_at)} ({c.seconds_left(now)} s left)"
    said = f"{doing} {named}, under {c.agent}'s {kind}{c.mode} claim {c.id} on "
    said += f"{', '.join(c.targets)} {until}"
    return said + (f": {c.objective!r}" if c.objective else "")


def todo(hit: Hit, now: float) -> str:
    """The commands to wait for the claim or to ask its holder for it."""
    wait = max(hit.claim.seconds_left(now), 1)
    targets = " ".join(hit.claim.targets)
    return (
        f"wait for it: memkeeper claim {targets} --wait {wait}; or ask its holder: "
        f"memkeeper request-release {hit.claim.id}"
    )


def warning(hit: Hit, now: float, doing: str) -> str:
    """An advisory claim's warning: the commit goes ahead."""
    return f"{what(hit, now, doing)} — advisory, so it goes ahead; {todo(hit, now)}"


def as_json(hit: Hit, now: float) -> dict[str, object]:
    c = hit.claim
    return {
        "claim": c.id,
        "holder": c.agent,
        "mode": c.mode,
        "strict": hit.blocks,
        "targets": list(c.targets),
        "paths": list(hit.paths),
        "expires_at": iso_utc(c.expires_at),
        "seconds_left": c.seconds_left(now),
        "objective": c.objective,
    }
