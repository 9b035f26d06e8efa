"""``memkeeper verify``: the event log's hash chain and the index against the files on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.errors import Failed, Invalid
from memkeeper.events import chain_breaks, digest
from memkeeper.fs import files as fsio
from memkeeper.records import Violation

if TYPE_CHECKING:
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event


violation = Violation  # where a check or verify finds a problem: path, line, rule, message, fix


def verify(ws: Workspace) -> dict[str, Any]:
    """Check the event chain and every indexed file against the index; raise ``Failed``."""
    found = problems(ws)
    if found:
        raise Failed(f"verify found {len(found)} problem(s)", violations=found)
    return {"events": len(ws.store.events()), "files": len(ws.store.indexed_paths())}


def problems(ws: Workspace) -> list[Violation]:
    """Every way the event log or the index disagrees with itself or with the files."""
    store = ws.store
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
        for path in store.indexed_paths():
            found.extend(_file_problems(ws, path))
    return found


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


def _file_problems(ws: Workspace, path: str) -> list[Violation]:
    store = ws.store
    state = store.file_state(path)
    assert state is not None
    try:
        data = fsio.read_bytes(ws.root, path)
    except Invalid:
        return [
            violation(
                path,
                None,
                "index",
                "indexed file is missing or not a regular file",
                "restore it, or remove its rule from the policy",
            )
        ]
    if digest(data) != state.file_hash:
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
    return found
