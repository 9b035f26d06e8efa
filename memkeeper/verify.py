"""``memkeeper verify``: the event log's hash chain and the index against the files on disk."""

from __future__ import annotations

from memkeeper import fsio
from memkeeper.errors import Invalid
from memkeeper.events import chain_breaks, digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.memory import Memory


def violation(
    path: str | None, line: int | None, rule: str, message: str, fix: str
) -> dict[str, Any]:
    return {"path": path, "line": line, "rule": rule, "message": message, "fix": fix}


def problems(memory: Memory) -> list[dict[str, Any]]:
    """Every way the event log or the index disagrees with itself or with the files."""
    store = memory.store
    with store.reading():
        found = [
            violation(
                None,
                None,
                "event-chain",
                f"event {event_id}: {what}",
                "history was altered outside memkeeper; restore .memkeeper/ from a "
                "backup, or move it aside to start a new log",
            )
            for event_id, what in chain_breaks(store.events())
        ]
        for path in store.indexed_paths():
            found.extend(_file_problems(memory, path))
    return found


def _file_problems(memory: Memory, path: str) -> list[dict[str, Any]]:
    store = memory.store
    state = store.file_state(path)
    assert state is not None
    try:
        data = fsio.read_bytes(memory.root, path)
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
