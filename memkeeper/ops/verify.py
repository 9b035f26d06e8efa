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

from memkeeper.errors import Failed, Invalid, PolicyInvalid
from memkeeper.events import digest
from memkeeper.fs import files as fsio
from memkeeper.fs.git import Git
from memkeeper.ops.stamping import Stamping
from memkeeper.policy.loader import load_policy
from memkeeper.records import Violation

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memkeeper.ops.workspace import Workspace


violation = Violation  # where a check or verify finds a problem: path, line, rule, message, fix


def verify(ws: Workspace, git: Git | None = None, *, full: bool = False) -> dict[str, Any]:
    """Check the event chain (from its last checkpoint; ``full``: from its start,
    ``ops.chain``) and every indexed file against the index; raise ``Failed``. ``files``
    counts the indexed files judged (managed, and not deleted on purpose): those whose stat
    stamp shows them as memkeeper last read them unread (``ops.stamping``), every one read
    with ``full``. An invalid policy is ``PolicyInvalid`` (exit 2), as for every other
    command."""
    from memkeeper.ops.chain import verify_chain
    from memkeeper.policy.loader import load_policy

    load_policy(ws.root)
    chain = verify_chain(ws, full=full)
    found, judged = _problems(ws, git or Git(ws.root), full)
    found = chain.violations + found
    if found:
        raise Failed(f"verify found {len(found)} problem(s)", violations=found)
    return {"events": chain.length, "files": judged, **chain.to_json()}


def problems(ws: Workspace, git: Git | None = None, *, full: bool = True) -> list[Violation]:
    """Every way the event log or the index disagrees with itself or with the files (the
    whole chain walked, no checkpoint left; ``full``: every file read, no stamp trusted)."""
    from memkeeper.ops.chain import verify_chain

    chain = verify_chain(ws, full=True, record=False)
    return chain.violations + _problems(ws, git or Git(ws.root), full)[0]


def _problems(ws: Workspace, git: Git, full: bool) -> tuple[list[Violation], int]:
    """The indexed files' problems, and how many were compared with their file."""
    store, judged = ws.store, 0
    managed, deleted = _managed(ws), _deleted_on_purpose(ws, git)
    seen = Stamping(ws, full=full)
    if ws.shared:  # other roots' changes first come into this root's files (reference §12)
        for path in store.indexed_paths():
            if managed(path) and seen.lstat(path) is not None and not seen.unchanged(path):
                with ws.locked(path), contextlib.suppress(fsio.Raced):
                    ws.sync_file(path)
    found: list[Violation] = []
    paths = [path for path in sorted(seen.hashes) if managed(path)]  # every indexed file
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
