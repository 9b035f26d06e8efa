"""The MCP tools of meetings and release answers (docs/reference.md §4.21, §4.32): plain
functions over a ``Memory`` answering what ``memkeeper meeting … --json`` and ``memkeeper
answer --json`` answer (``server`` registers them; ``tools.answer`` wraps their errors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from memkeeper.api import Memory

    Payload = dict[str, Any]


def meetings(memory: Memory, meeting_id: int | None, resolved: bool) -> Payload:
    """One meeting (``meeting show``), or the list (``meeting list``)."""
    if meeting_id is not None:
        return {"meeting": memory.meetings.show(meeting_id).to_json()}
    return {"meetings": [m.to_json() for m in memory.meetings.list(resolved=resolved)]}


def open_meeting(
    memory: Memory,
    others: Sequence[str],
    targets: Sequence[str],
    deadline: float | None,
    reason: str,
) -> Payload:
    m = memory.meetings.open(others, targets, deadline_s=deadline, reason=reason)
    return {"meeting": m.to_json()}


def propose(
    memory: Memory,
    meeting_id: int,
    expect_rev: int,
    kind: str,
    assign: Mapping[str, Sequence[str]] | None,
    who: str | None,
    note: str,
) -> Payload:
    m = memory.meetings.propose(meeting_id, expect_rev, kind, assign=assign, who=who, note=note)
    return {"meeting": m.to_json()}


def accept(memory: Memory, meeting_id: int, expect_rev: int, proposal: int) -> Payload:
    return {"meeting": memory.meetings.accept(meeting_id, expect_rev, proposal).to_json()}


def resolve(
    memory: Memory,
    meeting_id: int,
    expect_rev: int,
    proposal: int | None,
    kind: str | None,
    assign: Mapping[str, Sequence[str]] | None,
    who: str | None,
    note: str,
) -> Payload:
    m = memory.meetings.resolve(
        meeting_id, expect_rev, proposal=proposal, kind=kind, assign=assign, who=who, note=note
    )
    return {"meeting": m.to_json()}


def answer(
    memory: Memory, message_id: int, release: bool, reason: str | None, eta: float | None
) -> Payload:
    told = memory.meetings.answer(message_id, release=release, reason=reason, eta=eta)
    return {"message": told.to_json(), "released": release}
