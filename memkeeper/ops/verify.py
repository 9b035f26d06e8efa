"""``memkeeper verify``: the event log's hash chain and the index against the files on disk.

Only the files the policy manages now are judged. A managed file that is gone was deleted on
purpose when git's ``HEAD`` does not hold it (the deletion was committed, or the branch
checked out never had it): that leaves verify clean. Gone while ``HEAD`` holds it — or with
no commit, or no git, to tell — it is a problem until it is restored or its deletion
committed.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from memkeeper import names
from memkeeper.errors import Failed, Invalid, PolicyInvalid
from memkeeper.events import chain_breaks, digest
from memkeeper.fs import files as fsio
from memkeeper.fs.git import Git
from memkeeper.ops.stamping import Stamping
from memkeeper.policy.loader import load_policy
from memkeeper.records import Violation

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event


violation = Violation  # where a check or verify finds a problem: path, line, rule, message, fix


def verify(ws: Workspace, git: Git | None = None, *, full: bool = False) -> dict[str, Any]:
    """Check the event chain and every indexed file against the index; raise ``Failed``.
    ``files`` counts the indexed files judged (managed, and not deleted on purpose): those
    whose stat stamp shows them as memkeeper last read them unread (``ops.stamping``), every
    one read with ``full``. An invalid policy is ``PolicyInvalid`` (exit 2), as for every
    other command."""
    from memkeeper.policy.loader import load_policy

    load_policy(ws.root)
    found, judged = _problems(ws, git or Git(ws.root), full)
    if found:
        raise Failed(f"verify found {len(found)} problem(s)", violations=found)
    return {"events": len(ws.store.events()), "files": judged}


def problems(ws: Workspace, git: Git | None = None, *, full: bool = True) -> list[Violation]:
    """Every way the event log or the index disagrees with itself or with the files."""
    return _problems(ws, git or Git(ws.root), full)[0]


def _problems(ws: Workspace, git: Git, full: bool) -> tuple[list[Violation], int]:
    """The problems, and how many indexed files were compared with their file."""
    store, judged = ws.store, 0
    managed, deleted = _managed(ws), _deleted_on_purpose(ws, git)
    seen = Stamping(ws, full=full)
    if ws.shared:  # other roots' changes first come into this root's files (reference §12)
        for path in store.indexed_paths():
            if managed(path) and seen.lstat(path) is not None and not seen.unchanged(path):
                with ws.locked(path), contextlib.suppress(fsio.Raced):
                    ws.sync_file(path)
    with store.reading():
        events = store.events()
        breaks = chain_breaks(events)
        breaks += tail_break(events[-1] if events else None, store.events_head())
        found = [
            violation(
                None,
                None,
                "event-chain",
                f"event {event_id}: {what}",
                "history was altered outside memkeeper; restore .memkeeper/ from a "
                "backup, or move it aside to start a new log",
            )
            for event_id, what in breaks
        ]
        found += _signature_problems(ws, events)
        paths = [path for path in sorted(seen.hashes) if managed(path)]  # in this snapshot
    same = seen.unchanged_among(paths)  # as the index holds them: nothing to read
    for path in paths:
        if path in same:
            judged += 1
            continue
        if deleted(path):
            continue
        # Under the file's lock, which a writer holds from its commit to its rename: a file
        # the daemon is rendering right now is compared once its write has landed.
        with ws.locked(path):
            found.extend(_file_problems(ws, path, git, seen))
        judged += 1
    seen.save()
    return found, judged


def _signature_problems(ws: Workspace, events: list[Event]) -> list[Violation]:
    """Events not signed by a key the signers file trusts for their actor — judged once the
    repository has a signers file (before that, nobody is trusted and nothing is asked)."""
    trusted = ws.trusted_signers()
    if not trusted:
        return []
    from memkeeper.identity import attest

    return [
        violation(
            names.SIGNERS_FILE,
            None,
            "signature",
            f"event {event.id} ({event.type} by {event.actor}): {what}",
            "find who wrote it (memkeeper events --json); trust its key with memkeeper keys "
            "trust, or treat the event as not written by its actor",
        )
        for event, what in attest.problems(events, trusted)
    ]


def _managed(ws: Workspace) -> Callable[[str], bool]:
    """Whether the policy manages a path now; with a policy that cannot be read, every
    indexed path counts as managed (verify still judges the index)."""
    try:
        policy = load_policy(ws.root)
    except PolicyInvalid:
        return lambda path: True
    return lambda path: policy.classify(path) is not None


def _deleted_on_purpose(ws: Workspace, git: Git) -> Callable[[str], bool]:
    """Whether a path is gone from the working tree and absent from git's ``HEAD``; git is
    asked only about paths that are gone, and only once whether it has a commit."""
    committed: list[bool] = []

    def deleted(path: str) -> bool:
        if os.path.lexists(os.path.join(ws.root, path)):
            return False
        if not committed:
            # ``HEAD:`` is the root tree, there once a commit is: without one, git cannot tell
            committed.append(git.is_repo() and git.show("HEAD:") is not None)
        return committed[0] and _in_head(git, path) is None

    return deleted


def tail_break(last: Event | None, head: tuple[int, str] | None) -> list[tuple[int, str]]:
    """The log must end at the head the store recorded with its last append: a chain that
    holds but ends early lost its newest events. (A store from before heads were recorded
    has none, and is judged by its chain alone.)"""
    if head is None or (last is not None and (last.id, last.hash) == head):
        return []
    head_id = head[0]
    if last is not None and last.id == head_id:
        return [(head_id, "it is not the last event memkeeper wrote: its hash differs")]
    if last is not None and last.id > head_id:
        return [(last.id, f"the log goes on past event {head_id}, the last one memkeeper wrote")]
    ends = f"ends at event {last.id}" if last is not None else "is empty"
    what = f"the log {ends}, but event {head_id} was the last one written"
    return [(head_id, f"{what}: events were deleted from its end")]


def _file_problems(ws: Workspace, path: str, git: Git, seen: Stamping) -> list[Violation]:
    store = ws.store
    state = store.file_state(path)
    assert state is not None
    try:
        data = seen.read(path)
    except Invalid:
        return [_missing(ws, path, git)]
    file_hash = digest(data)
    if file_hash != state.file_hash:
        return [
            violation(
                path,
                None,
                "index",
                "changed since memkeeper last indexed it",
                f"run `memkeeper read {path}` to index the change",
            )
        ]
    rows = store.sections(path)
    found = [
        violation(
            path,
            None,
            "index",
            f"section {row.key!r}: stored hash does not match its stored text",
            "move .memkeeper/ aside and run memkeeper init",
        )
        for row in rows
        if row.hash != digest(row.heading + row.body)
    ]
    if b"".join(row.heading + row.body for row in rows) != data:
        found.append(
            violation(
                path,
                None,
                "index",
                "the indexed sections do not add up to the file",
                "move .memkeeper/ aside and run memkeeper init",
            )
        )
    if not found:  # as the index holds it: the next verify need not read it
        seen.note(path, file_hash)
    return found


def _in_head(git: Git, path: str) -> bytes | None:
    """``HEAD``'s bytes of a root-relative path (``./``: the root may be below the top of its
    repository); ``None`` when ``HEAD`` does not hold it."""
    return git.show(f"HEAD:./{path}")


def _missing(ws: Workspace, path: str, git: Git) -> Violation:
    """An indexed file that is not there: one ``HEAD`` still holds was not deleted on purpose
    (or not yet: the deletion is not committed)."""
    if os.path.lexists(os.path.join(ws.root, path)) or _in_head(git, path) is None:
        return violation(
            path,
            None,
            "index",
            "indexed file is missing or not a regular file",
            "restore it, or remove its rule from the policy",
        )
    return violation(
        path,
        None,
        "index",
        "indexed file is missing, but git's HEAD still holds it",
        f"restore it (git checkout HEAD -- {path}); or, if it is gone on purpose, commit "
        f"the deletion (git rm {path}, then git commit)",
    )
