"""The MCP tools of meetings and release answers (docs/reference.md §4.21, §4.32): plain
functions over a ``Memory`` answering what ``memkeeper meeting … --json`` and ``memkeeper
answer --json`` answer, and ``register_meetings`` puts them on the server (imported only
by it: the annotations of the tools are read at run time, so their names are real imports)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer  # noqa: TC002 (the tools' annotations are read at run time)
from pydantic import Field

from memkeeper.limits import MAX_INT

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

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


MeetingId = Annotated[int, Field(description="a meeting's id", ge=1, le=MAX_INT)]
MeetingRev = Annotated[
    int, Field(description="the meeting's rev as you read it (compare-and-swap)", ge=0, le=MAX_INT)
]
Kind = Annotated[
    Literal["split", "serialize", "handoff", "join", "escalate"],
    Field(description="split, serialize, handoff, join or escalate"),
]
Assign = Annotated[
    dict[str, list[str]] | None,
    Field(description="split: each participant's targets (paths or PATH#KEY)"),
]
Who = Annotated[str | None, Field(description="serialize: who goes first; handoff: who takes")]
Note = Annotated[str, Field(description="a word on the plan")]


def register_meetings(server: MCPServer, run: Callable[..., Payload]) -> None:
    """The tools of meetings and release answers, on ``server`` (``run`` calls one with the
    caller's ``Memory`` and turns its errors into tool errors)."""

    @server.tool()
    def memory_meetings(
        ctx: Context,
        id: Annotated[int | None, Field(description="one meeting (default: the list)")] = None,
        resolved: Annotated[bool, Field(description="list resolved ones too")] = False,
    ) -> Payload:
        """Meetings on overlapping claims: participants, contested targets, proposals, rev,
        deadline, state (a meeting past its deadline escalates to a human)."""
        return run(ctx, lambda m: meetings(m, id, resolved))

    @server.tool()
    def memory_meeting_open(
        others: Annotated[list[str], Field(description="the other participants' identities")],
        targets: Annotated[list[str], Field(description="the contested targets")],
        ctx: Context,
        deadline: Annotated[float | None, Field(description="seconds to agree")] = None,
        reason: Annotated[str, Field(description="why")] = "",
    ) -> Payload:
        """Open a meeting with another agent on targets you both need."""
        return run(ctx, lambda m: open_meeting(m, others, targets, deadline, reason))

    @server.tool()
    def memory_meeting_propose(
        id: MeetingId, expect_rev: MeetingRev, kind: Kind, ctx: Context,
        assign: Assign = None, who: Who = None, note: Note = "",
    ) -> Payload:  # fmt: skip
        """Propose a resolution (you accept it yourself)."""
        return run(ctx, lambda m: propose(m, id, expect_rev, kind, assign, who, note))

    @server.tool()
    def memory_meeting_accept(
        id: MeetingId,
        expect_rev: MeetingRev,
        proposal: Annotated[int, Field(description="the proposal's number", ge=1, le=MAX_INT)],
        ctx: Context,
    ) -> Payload:
        """Accept a proposal of a meeting you take part in."""
        return run(ctx, lambda m: accept(m, id, expect_rev, proposal))

    @server.tool()
    def memory_meeting_resolve(
        id: MeetingId, expect_rev: MeetingRev, ctx: Context,
        proposal: Annotated[int | None, Field(description="a proposal all accepted")] = None,
        kind: Annotated[Kind | None, Field(description="or a plan: its kind")] = None,
        assign: Assign = None, who: Who = None, note: Note = "",
    ) -> Payload:  # fmt: skip
        """Resolve a meeting: with a proposal every participant accepted, or escalate it."""
        return run(ctx, lambda m: resolve(m, id, expect_rev, proposal, kind, assign, who, note))

    @server.tool()
    def memory_answer(
        id: Annotated[int, Field(description="the release request's message id", ge=1)],
        ctx: Context,
        release: Annotated[bool, Field(description="release the claim it asks for")] = False,
        reason: Annotated[str | None, Field(description="else: why you keep it")] = None,
        eta: Annotated[float | None, Field(description="with reason: seconds until done")] = None,
    ) -> Payload:
        """Answer a release request: release the claim, or say why not yet (and when)."""
        return run(ctx, lambda m: answer(m, id, release, reason, eta))
