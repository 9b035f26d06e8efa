"""``memkeeper compact``, and the daemon's compaction (docs/reference.md §8 "Compaction"): the
log's oldest events, as far as the policy's ``events:`` (``keep_days``, ``keep``) lets them
go, replaced by the ``compacted`` checkpoint — the id and hash of the last event removed,
signed by this process's key — so the chain stays verifiable from there.

Nothing is removed unchecked: the events are walked first from the previous compaction point
(every link, and every signature once there is a signers file), so a compaction never
destroys the evidence of tampering ``verify --full`` would have found; a walk that finds a
problem stops the compaction there, naming it. The events go in batches, each one
transaction that removes them and moves the checkpoint to its last one: a compaction cut
short (a crash, a problem found) leaves a log that starts at a checkpoint, as a whole one
does. The newest event is never removed (the next append chains after it).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from memkeeper import checkpoints
from memkeeper.checkpoints import COMPACTED, Unreadable
from memkeeper.errors import EnvironmentFailure, Failed, Invalid
from memkeeper.events import GENESIS, iso_utc
from memkeeper.ops.chain import (
    Walk,
    chain_violation,
    judged_checkpoint,
    signers_digest,
    stored_checkpoint,
    walk_from,
)
from memkeeper.policy.loader import load_policy

if TYPE_CHECKING:
    from memkeeper.identity.keys import Signer
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Violation
    from memkeeper.store.protocol import StateStore

DAY_S = 24 * 3600.0
LOCAL_BATCH = 5_000  # events removed by one SQLite transaction
SHARED_BATCH = 30  # by one etcd transaction: up to four operations an event, 128 at most


def compact(ws: Workspace) -> dict[str, Any]:
    """``memkeeper compact``: compact what the policy's ``events:`` lets go. ``Invalid`` when
    it bounds nothing; otherwise as ``compact_to``."""
    policy = load_policy(ws.root)
    keep_days, keep = policy.event_keep_days, policy.event_keep
    if keep_days is None and keep is None:
        raise Invalid(
            "the policy keeps every event: it has no `events:` with `keep_days:` or `keep:` — "
            "add one to .memkeeper.yaml (e.g. `events: {keep_days: 90}`), then compact"
        )
    return compact_to(ws, keep_days, keep)


def compact_to(
    ws: Workspace, keep_days: int | None, keep: int | None, *, limit: int | None = None
) -> dict[str, Any]:
    """Compact the events older than ``keep_days`` or beyond the newest ``keep`` (at most
    ``limit`` of them: the daemon's share of a look). ``EnvironmentFailure`` without a key
    to sign the checkpoint; ``Failed`` naming a problem found in the events to remove.
    Returns ``compacted`` (the id the log is compacted through now), ``removed`` and
    ``more`` (whether more is due: ``limit`` cut this one short)."""
    store = ws.store
    base = _base(ws)
    head = store.events_head()
    if head is None:
        return {"compacted": base[0], "removed": 0, "more": False}
    cut = compaction_cut(store, head[0], keep_days, keep, ws.now())
    end = cut if limit is None else min(cut, base[0] + limit)
    if end <= base[0]:
        return {"compacted": base[0], "removed": 0, "more": False}
    key = ws.signing.signing_key()
    if key is None:
        raise EnvironmentFailure(
            "compacting signs a checkpoint of the log's new start, and this process has no "
            "key — nothing was compacted; run memkeeper keys init (or set $MEMKEEPER_KEY)"
        )
    removed = _remove(ws, base, end, key)
    return {"compacted": compacted_through(ws), "removed": removed, "more": end < cut}


def compacted_through(ws: Workspace) -> int:
    """The id up to which the log was compacted (0: it never was, or its checkpoint cannot
    be read — which ``verify`` reports)."""
    try:
        found = ws.store.chain_checkpoint(COMPACTED)
    except Unreadable:
        return 0
    return 0 if found is None else found.seq


def compaction_cut(
    store: StateStore, head: int, keep_days: int | None, keep: int | None, now: float
) -> int:
    """The last id the policy lets go: beyond the newest ``keep``, or older than
    ``keep_days`` — never the newest event (0: none)."""
    cut = 0 if keep is None else head - keep
    if keep_days is not None:
        cut = max(cut, _older_than(store, head, iso_utc(now - keep_days * DAY_S)))
    return max(0, min(cut, head - 1))


def _older_than(store: StateStore, head: int, before: str) -> int:
    """The last id whose event was recorded before ``before``, by bisection over ids (the
    log is in time order, save for a clock stepped back: then the cut errs either way by
    the step); 0 when the first event stored is not older."""
    first = store.events(0, 1)
    if not first or first[0].ts >= before:
        return 0
    low, high = first[0].id, head
    while low < high:
        mid = (low + high + 1) // 2
        at = store.events(mid - 1, 1)
        if at and at[0].ts < before:
            low = mid
        else:
            high = mid - 1
    return low


def _base(ws: Workspace) -> tuple[int, str]:
    """Where the log starts now: the ``compacted`` checkpoint's event, else before event 1;
    one that cannot be read or whose signature does not hold stops the compaction."""
    found: list[Violation] = []
    cp = judged_checkpoint(
        stored_checkpoint(ws.store, COMPACTED, found), ws.signing.trusted_signers(), found
    )
    if found:
        raise Failed("the log's compaction point cannot be vouched for", violations=found)
    return (0, GENESIS) if cp is None else cp.point


def _remove(ws: Workspace, base: tuple[int, str], end: int, key: Signer) -> int:
    """Walk and remove the events after ``base`` through ``end``, batch by batch; how many
    were removed (``Failed`` at the first problem, the batches before it removed)."""
    store, trusted, signers = ws.store, ws.signing.trusted_signers(), signers_digest(ws)
    batch = SHARED_BATCH if ws.shared else LOCAL_BATCH
    walk, removed = Walk(base, []), 0
    while walk.point[0] < end:
        before = walk.point
        walk_from(store, walk, trusted, through=min(end, before[0] + batch))
        if walk.found:
            raise Failed(
                f"compaction stopped after event {before[0]}: the events to remove are not "
                "intact, and are kept for memkeeper verify --full to name",
                violations=walk.found,
            )
        if walk.point == before:
            break
        made = checkpoints.make(
            COMPACTED, walk.point, iso_utc(ws.now()), ws.agent, signers, key.sign
        )
        # With a shared store, a writer that got in first makes the batch start over.
        count = ws.again(functools.partial(_removed, store, before, made))
        if count is None:  # another process compacted meanwhile: it goes on from there
            break
        removed += count
    return removed


def _removed(
    store: StateStore, before: tuple[int, str], made: checkpoints.Checkpoint
) -> int | None:
    """One batch's transaction: the events through ``made.seq`` removed and ``made`` kept,
    if the log still starts at ``before`` (None: another compaction moved it) and its event
    at ``made.seq`` is still the one walked (``Failed`` otherwise)."""
    with store.writing():
        try:
            there = store.chain_checkpoint(COMPACTED)
        except Unreadable:
            there = None
        if (there.point if there is not None else (0, GENESIS)) != before:
            return None
        at = store.events(made.seq - 1, 1)
        if not at or (at[0].id, at[0].hash) != made.point:
            what = "it changed while it was being compacted"
            raise Failed(
                f"compaction stopped after event {before[0]}",
                violations=[chain_violation(made.seq, what)],
            )
        count = store.compact_events(made.seq)
        store.put_chain_checkpoint(made)
    return count
