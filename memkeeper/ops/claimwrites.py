"""Claims and the writes they cover: a claim's targets as the table keeps them, and what the
live claims say of a write — advisory ones warn, a strict one (or a ``strict: true`` rule)
of another agent refuses it, and a fenced write lands only under its writer's own live
claim (docs/reference.md §4). On the path of a ``patch`` or an ``append`` made while a
claim is live.
"""

from __future__ import annotations

import functools
import os

from memkeeper.claims import decisions as rules
from memkeeper.claims.wording import holder_json
from memkeeper.errors import Refused
from memkeeper.fs import root as roots
from memkeeper.markdown import refs
from memkeeper.ops.jointclaims import as_seen_by
from memkeeper.ops.read import present_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace


def resolve_target(ws: Workspace, target: str) -> str:
    """A root-relative target; ``PATH#KEY`` with the section's full key (``#build`` names
    ``inventory-service/build``), resolved against the file as it is now."""
    path, key = refs.split_ref(target)
    if key is None:
        rel = _relative(ws.top, path, os.getcwd())
        return rel + "/" if path.endswith("/") else rel
    rel = ws.relpath(path)
    keys = [(row.key, row.base) for row in present_rows(ws, rel)]  # a private file: unstored
    return f"{rel}#{refs.resolve_key(rel, key, keys)}"


@functools.lru_cache(maxsize=1024)
def _relative(top: str, path: str, cwd: str) -> str:
    """``roots.relative_path``, remembered per root, path and directory as ``Workspace.relpath``
    remembers it: resolving the root and the directory costs more than the rest of a claim."""
    return roots.relative_path(top, path, cwd)


def write_decision(
    ws: Workspace, rel: str, key: str | None, claim_id: str | None, now: float
) -> rules.WriteDecision:
    """What the live claims (strict where the policy says so) say of a write of ``rel``
    (its section ``key``, when given)."""
    target = rel if key is None else f"{rel}#{key}"
    strict = ws.rule(rel, key).strict
    claims = as_seen_by(ws, ws.store.claim_rows(), target)  # a joint claim (meetings)
    return rules.write_permission(claims, ws.agent, target, claim_id, now, strict=strict)


def check_write(ws: Workspace, rel: str, key: str, claim_id: str | None) -> tuple[str, ...]:
    """Warnings for a write of ``rel#key``; ``Refused`` (reason ``claimed``) when a strict
    claim (or a ``strict: true`` policy rule) of another agent covers it, or ``claim_id``
    is not a live write claim of this agent that covers it."""
    now, target = ws.claim_now(), f"{rel}#{key}"
    if claim_id is not None:
        # Read alone too, so that a shared store compares its key at the commit: a claim
        # whose etcd lease ends before the write commits fails the commit (``claim_row``).
        ws.store.claim_row(claim_id)
    decision = write_decision(ws, rel, key, claim_id, now)
    if decision.refusal is None:
        return decision.warnings
    message = f"{target}: {decision.refusal}"
    if decision.refusal.startswith(target):  # not the fence: another agent's strict claim
        strict = "; ".join(rules.describe(c, now) for c in decision.holders if c.strict)
        message = f"{target}: {strict} — wait for its release or expiry, then re-read"
    holders = [holder_json(c, now) for c in decision.holders]
    raise Refused(message, reason="claimed", holders=holders)


def recheck_fence(ws: Workspace, rel: str, key: str, claim_id: str) -> None:
    """The last step of a write fenced by ``claim_id``, just before its commit, after its
    slow parts (the merge, the staged file): the claim, live when the write began, must be
    live still. Nobody else can write the table meanwhile (the write holds the store's
    transaction), but time passes: a write that stalled past the claim's expiry is refused
    (reason ``claimed``) and its transaction rolled back — nothing lands."""
    now, target = ws.claim_now(), f"{rel}#{key}"
    decision = write_decision(ws, rel, key, claim_id, now)
    if decision.refusal is None:
        return
    holders = [holder_json(c, now) for c in decision.holders]
    raise Refused(
        f"{target}: {decision.refusal} (it expired while this write was under way: nothing "
        "was written)",
        reason="claimed",
        holders=holders,
    )
