"""The event chain's half of ``memkeeper verify`` (docs/reference.md §4.17, §8 "Checkpoints").

A routine verify walks the chain from the ``verified`` checkpoint — the last head a verify
found intact, signed by the process that verified it — so it costs what happened since; it
checks that checkpoint's signature and that the event it names still has its hash (rewriting
the history under it, hashes and all, changes that hash). ``full`` walks from the start of the
log: event 1, or the ``compacted`` checkpoint where the log starts once its oldest events
were compacted (``ops.compact``). Either way, a walk that found nothing wrong leaves a new
``verified`` checkpoint at the head it reached, signed with this process's key (a process
with no key, or one the signers file does not trust, leaves none). Tampering before a
checkpoint that leaves the checkpoint's event as it was is found by ``verify --full`` alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from memkeeper import checkpoints, names
from memkeeper.checkpoints import COMPACTED, VERIFIED, Checkpoint, Unreadable
from memkeeper.events import GENESIS, chain_breaks, digest, iso_utc
from memkeeper.records import Violation

if TYPE_CHECKING:
    from typing import Any

    from memkeeper.identity.signers import Signer
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event
    from memkeeper.store.protocol import StateStore

BATCH = 10_000  # events read at a time: a walk of a million holds this many at once
CHAIN_FIX = (
    "history was altered outside memkeeper; restore .memkeeper/ from a backup, or move it "
    "aside to start a new log"
)


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What a walk of the chain found: ``violations``; ``length``, the chain's (its last
    event's id, compacted events included); ``checked``, the events walked; ``since``, the
    id the walk went on from (0: the start); ``compacted``, the id up to which the log was
    compacted (0: none); ``checkpoint``, the id the ``verified`` checkpoint now names (None:
    there is none); ``unsigned``, why no checkpoint was written (None: one was, or kept)."""

    violations: list[Violation] = field(default_factory=list)
    length: int = 0
    checked: int = 0
    since: int = 0
    compacted: int = 0
    checkpoint: int | None = None
    unsigned: str | None = None

    def to_json(self) -> dict[str, Any]:
        """What ``verify --json`` adds of it, beside ``events`` (the length)."""
        keys = ("checked", "since", "compacted", "checkpoint", "unsigned")
        return {key: getattr(self, key) for key in keys}


@dataclass(slots=True)
class Walk:
    """A walk in progress: where it is, what it counted and found."""

    point: tuple[int, str]
    found: list[Violation]
    checked: int = 0


def verify_chain(ws: Workspace, *, full: bool = False, record: bool = True) -> ChainReport:
    """Walk the chain from the last checkpoint (``full``: from the log's start) and, with
    ``record``, leave a checkpoint at its head when nothing was wrong."""
    store, trusted, signers = ws.store, ws.signing.trusted_signers(), signers_digest(ws)
    found: list[Violation] = []
    # A forged or unreadable ``verified`` checkpoint is reported, and the walk starts before
    # it; a full walk that finds nothing else replaces it with a checkpoint of its own.
    forged: list[Violation] = []
    with store.reading():
        compacted = judged_checkpoint(stored_checkpoint(store, COMPACTED, found), trusted, found)
        verified = judged_checkpoint(stored_checkpoint(store, VERIFIED, forged), trusted, forged)
        base = (0, GENESIS) if compacted is None else compacted.point
        start = base
        if not full and verified is not None:
            start = _resume(store, verified, base, signers, found)
        walk = Walk(start, found)
        walk_from(store, walk, trusted)
        last = None if walk.point[0] == 0 else walk.point
        found += [chain_violation(i, what) for i, what in tail_break(last, store.events_head())]
    held = None if verified is None else verified.seq
    report = ChainReport(forged + found, walk.point[0], walk.checked, start[0], base[0], held)
    if not record or found or (forged and not full) or last is None:
        return report
    if verified is not None and (verified.point, verified.signers) == (last, signers):
        return report  # nothing new since: the checkpoint stands as it is
    return _recorded(ws, report, last, signers, trusted)


def walk_from(
    store: StateStore, walk: Walk, trusted: tuple[Signer, ...], through: int | None = None
) -> None:
    """Walk the events after ``walk.point`` (up to ``through``, None: to the end), in
    batches: every link, and every signature once there is a signers file."""
    while through is None or walk.point[0] < through:
        limit = BATCH if through is None else min(BATCH, through - walk.point[0])
        batch = store.events(walk.point[0], limit)
        if not batch:
            return
        walk.found += [chain_violation(i, what) for i, what in chain_breaks(batch, walk.point)]
        walk.found += signature_problems(batch, trusted)
        walk.checked += len(batch)
        walk.point = batch[-1].id, batch[-1].hash
        if len(batch) < limit:
            return


def signers_digest(ws: Workspace) -> str | None:
    """The digest of the repository's signers file (None: there is none): a checkpoint
    records the file its walk judged signatures by."""
    try:
        with open(os.path.join(ws.top, names.SIGNERS_FILE), "rb") as handle:
            return digest(handle.read())
    except FileNotFoundError:
        return None


def signature_problems(events: list[Event], trusted: tuple[Signer, ...]) -> list[Violation]:
    """Events not signed by a key the signers file trusts for their actor — judged once the
    repository has a signers file (before that, nobody is trusted and nothing is asked)."""
    if not trusted:
        return []
    from memkeeper.identity import attest

    return [
        Violation(
            names.SIGNERS_FILE,
            None,
            "signature",
            f"event {event.id} ({event.type} by {event.actor}): {what}",
            "find who wrote it (memkeeper events --json); trust its key with memkeeper keys "
            "trust, or treat the event as not written by its actor",
        )
        for event, what in attest.problems(events, trusted)
    ]


def tail_break(last: tuple[int, str] | None, head: tuple[int, str] | None) -> list[tuple[int, str]]:
    """The log must end at the head the store recorded with its last append (``last``: the
    id and hash of the last event walked): a chain that holds but ends early lost its newest
    events. (A store from before heads were recorded has none, and is judged by its chain
    alone.)"""
    if head is None or last == head:
        return []
    head_id = head[0]
    if last is not None and last[0] == head_id:
        return [(head_id, "it is not the last event memkeeper wrote: its hash differs")]
    if last is not None and last[0] > head_id:
        return [(last[0], f"the log goes on past event {head_id}, the last one memkeeper wrote")]
    ends = f"ends at event {last[0]}" if last is not None else "is empty"
    what = f"the log {ends}, but event {head_id} was the last one written"
    return [(head_id, f"{what}: events were deleted from its end")]


def stored_checkpoint(store: StateStore, kind: str, found: list[Violation]) -> Checkpoint | None:
    try:
        return store.chain_checkpoint(kind)
    except Unreadable as err:
        found.append(checkpoint_violation(kind, f"cannot be read: {err}"))
        return None


def judged_checkpoint(
    cp: Checkpoint | None, trusted: tuple[Signer, ...], found: list[Violation]
) -> Checkpoint | None:
    """``cp`` when its signature holds; else reported, and None for a ``verified`` one (a
    ``compacted`` one is still where the log starts: the walk goes on from it)."""
    if cp is None:
        return None
    from memkeeper.identity import attest

    what = attest.judge_checkpoint(cp, trusted)
    if what is None:
        return cp
    found.append(
        checkpoint_violation(cp.kind, f"(event {cp.seq}, by {cp.actor} at {cp.ts}): {what}")
    )
    return cp if cp.kind == COMPACTED else None


def _resume(
    store: StateStore,
    cp: Checkpoint,
    base: tuple[int, str],
    signers: str | None,
    found: list[Violation],
) -> tuple[int, str]:
    """Where a routine walk starts: at the ``verified`` checkpoint when the event it names
    still has its hash; else at ``base`` (a compaction went past it, the signers file
    changed since — every signature is judged again —, or history under it was rewritten)."""
    if cp.seq < base[0] or cp.signers != signers:
        return base
    if cp.seq == base[0]:
        held: str | None = base[1]
    else:
        at = store.events(cp.seq - 1, 1)
        held = at[0].hash if at and at[0].id == cp.seq else None
    if held == cp.hash:
        return cp.point
    by = f"the checkpoint of {cp.ts} by {cp.actor}"
    what = (
        f"it is gone, though {by} names it"
        if held is None
        else f"it no longer has the hash {by} recorded"
    )
    found.append(chain_violation(cp.seq, f"{what}: the history up to it was rewritten"))
    return base


def _recorded(
    ws: Workspace,
    report: ChainReport,
    last: tuple[int, str],
    signers: str | None,
    trusted: tuple[Signer, ...],
) -> ChainReport:
    """Leave a ``verified`` checkpoint at ``last``, signed with this process's key — unless
    a later one is there already (another verify's), or no key can sign one."""
    key = ws.signing.signing_key()
    if key is None:
        return replace(report, unsigned="this process has no key (memkeeper keys init makes one)")
    made = checkpoints.make(VERIFIED, last, iso_utc(ws.now()), ws.agent, signers, key.sign)
    from memkeeper.identity import attest

    untrusted = attest.judge_checkpoint(made, trusted)
    if untrusted is not None:
        return replace(report, unsigned=f"a checkpoint by this process's key: {untrusted}")
    store = ws.store

    def put() -> int:
        """The seq the checkpoint names once this one is kept, or a later one left."""
        with store.writing():
            try:
                there = store.chain_checkpoint(VERIFIED)
            except Unreadable:
                there = None
            if there is not None and there.seq > made.seq and there.signers == signers:
                return there.seq
            store.put_chain_checkpoint(made)
        return made.seq

    # With a shared store, a writer that got in first makes it look again.
    return replace(report, checkpoint=ws.again(put))


def chain_violation(event_id: int, what: str) -> Violation:
    return Violation(None, None, "event-chain", f"event {event_id}: {what}", CHAIN_FIX)


def checkpoint_violation(kind: str, what: str) -> Violation:
    fix = (
        "run memkeeper verify --full: it walks the whole chain and, finding it intact, signs "
        "a checkpoint of its own over this one"
        if kind == VERIFIED
        else "the events before it are gone, so nothing else can vouch for where the log "
        "starts: if its signer is one of yours, trust its key (memkeeper keys trust); else "
        "restore .memkeeper/ from a backup, or move it aside to start a new log"
    )
    return Violation(None, None, "checkpoint", f"the {kind} checkpoint {what}", fix)
