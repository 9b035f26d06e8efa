"""A section's history and its undo (docs/reference.md §4.25 and §4.26): ``log`` (each revision:
who, when, how; with ``diff``, what it changed), the body at an earlier revision, and
``revert`` — a patch like any other (compare-and-swap, the class and structure rules, its
event) whose body is an earlier revision's. The store keeps the last 100 bodies of every
section; an older revision's text is gone, and saying so is the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memkeeper.errors import Invalid

if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import PatchResult

LOG_LIMIT = 100


def log(ws: Workspace, ref: str, *, limit: int = LOG_LIMIT, diff: bool = False) -> dict[str, Any]:
    """The section as ``read`` gives it, and ``revisions``: newest first, each ``rev``,
    ``actor``, ``ts``, ``type`` and ``event`` (its id) — with ``diff``, the unified diff from
    the revision before (null where either body is no longer kept)."""
    from memkeeper.ops.views import history

    found = history(ws, ref, limit)
    revisions = []
    for event in found.pop("history"):
        rev = event["data"].get("rev")
        if not isinstance(rev, int):
            continue
        entry = {
            "rev": rev,
            "actor": event["actor"],
            "ts": event["ts"],
            "type": event["type"],
            "event": event["id"],
        }
        if diff:
            entry["diff"] = _diff(ws, found["path"], found["key"], rev)
        revisions.append(entry)
    return {**found, "revisions": revisions}


def body_at(ws: Workspace, ref: str, rev: int) -> dict[str, Any]:
    """``read --rev N``: the section's body at revision ``rev`` (``Invalid`` if it is no
    longer kept, or never was)."""
    from memkeeper.ops.read import read

    current = read(ws, ref)
    if current.key is None:
        raise Invalid(f"{ref}: --rev needs a section — write PATH#KEY")
    body = _kept(ws, current.path, current.key, rev)
    if body is None:
        raise Invalid(
            f"{current.path}#{current.key}: rev {rev} is not kept (the section is at rev "
            f"{current.rev}; the store keeps its last 100 bodies) — see "
            f"`memkeeper log {current.path}#{current.key}`"
        )
    return {
        "path": current.path,
        "key": current.key,
        "rev": rev,
        "current_rev": current.rev,
        "content": body.decode("utf-8", "replace"),
    }


def revert(ws: Workspace, ref: str, *, to_rev: int, expect_rev: int) -> PatchResult:
    """Patch the section back to its body at ``to_rev``, if it is still at ``expect_rev``."""
    from memkeeper.ops.patch import patch

    earlier = body_at(ws, ref, to_rev)
    return patch(ws, ref, earlier["content"].encode("utf-8"), expect_rev=expect_rev)


def _kept(ws: Workspace, path: str, key: str, rev: int) -> bytes | None:
    return ws.store.body_at(path, key, rev) if ws.has_store and rev > 0 else None


def _diff(ws: Workspace, path: str, key: str, rev: int) -> str | None:
    import difflib

    after, before = _kept(ws, path, key, rev), _kept(ws, path, key, rev - 1)
    if after is None or before is None:
        return None
    lines = difflib.unified_diff(
        before.decode("utf-8", "replace").splitlines(keepends=True),
        after.decode("utf-8", "replace").splitlines(keepends=True),
        f"{path}#{key} rev {rev - 1}",
        f"{path}#{key} rev {rev}",
    )
    return "".join(lines)
