"""The MCP tools of work items (docs/reference.md §4.21, §4.33): plain functions over a
``Memory`` answering what ``memkeeper work … --json`` answers, and ``register_work`` puts them
on the server as ``memory_work_*`` (the names every memkeeper tool has: ``memory_`` and the
verb). Imported only by the server: the tools' annotations are read at run time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer  # noqa: TC002 (the tools' annotations are read at run time)
from pydantic import Field

from memkeeper.limits import MAX_INT

if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.api import Memory

Payload = dict[str, Any]


def listing(memory: Memory, item_id: int | None, ready: bool) -> Payload:
    """One item (``work show``), or the list (``work list [--ready]``), each with why it is
    ``blocked`` (the failed items it waits on)."""
    from memkeeper.work.blocked import blocked_map

    if item_id is not None:
        item = memory.work.show(item_id)
        found = memory.work.blockers(item_id)
        return {"item": item.to_json() | {"blocked": [b.to_json() for b in found]}}
    items = memory.work.list(ready=ready)
    blocked = blocked_map(items)
    return {
        "items": [
            i.to_json() | {"blocked": [b.to_json() for b in blocked.get(i.id, ())]} for i in items
        ]
    }


def add(
    memory: Memory,
    title: str,
    paths: Sequence[str],
    priority: int,
    after: Sequence[int],
    body: str,
) -> Payload:
    item = memory.work.add(title, paths=paths, priority=priority, after=after, body=body)
    return {"item": item.to_json()}


def take(memory: Memory, ttl: float | None, wait: float | None) -> Payload:
    from memkeeper.claims.wording import claim_json

    item, claim = memory.work.next(ttl=ttl, wait=wait)
    return {"item": item.to_json(), "claim": claim_json(claim, memory.claim_now())}


def done(memory: Memory, item_id: int, verify: Sequence[str], claim: str | None) -> Payload:
    return {"item": memory.work.done(item_id, verify, claim=claim).to_json()}


def fail(memory: Memory, item_id: int, reason: str, claim: str | None) -> Payload:
    return {"item": memory.work.fail(item_id, reason, claim=claim).to_json()}


def give_back(memory: Memory, item_id: int, claim: str | None) -> Payload:
    return {"item": memory.work.give_back(item_id, claim=claim).to_json()}


def edit(memory: Memory, item_id: int, expect_rev: int, changes: dict[str, Any]) -> Payload:
    """``work edit``: only the fields given (not None) change."""
    return {"item": memory.work.edit(item_id, expect_rev=expect_rev, **changes).to_json()}


def retry(memory: Memory, item_id: int) -> Payload:
    return {"item": memory.work.retry(item_id).to_json()}


ItemId = Annotated[int, Field(description="a work item's id", ge=1, le=MAX_INT)]
ClaimId = Annotated[str | None, Field(description="the claim memory_work_next gave you (fencing)")]


def register_work(server: MCPServer, run: Callable[..., Payload]) -> None:
    """The tools of work items, on ``server`` (``run`` calls one with the caller's ``Memory``
    and turns its errors into tool errors)."""

    @server.tool()
    def memory_work_list(
        ctx: Context,
        id: Annotated[int | None, Field(description="one item (default: the list)")] = None,
        ready: Annotated[bool, Field(description="only ready ones, in hand-out order")] = False,
    ) -> Payload:
        """Work items: title, paths, priority, dependencies, state and who works on it."""
        return run(ctx, lambda m: listing(m, id, ready))

    @server.tool()
    def memory_work_add(
        title: Annotated[str, Field(description="what is to be done")],
        ctx: Context,
        paths: Annotated[list[str] | None, Field(description="what its claim covers")] = None,
        priority: Annotated[int, Field(description="higher first", ge=-MAX_INT, le=MAX_INT)] = 0,
        after: Annotated[list[int] | None, Field(description="ids to be done first")] = None,
        body: Annotated[str, Field(description="a description")] = "",
    ) -> Payload:
        """Add a work item to the queue."""
        return run(ctx, lambda m: add(m, title, paths or [], priority, after or [], body))

    @server.tool()
    def memory_work_next(
        ctx: Context,
        ttl: Annotated[float | None, Field(description="its claim's TTL in seconds")] = None,
        wait: Annotated[float | None, Field(description="block up to S seconds")] = None,
    ) -> Payload:
        """Take the next work item: the highest-priority ready one whose paths are free,
        with a claim on them (status 'busy' when there is none)."""
        return run(ctx, lambda m: take(m, ttl, wait))

    @server.tool()
    def memory_work_done(
        id: ItemId,
        ctx: Context,
        verify: Annotated[list[str] | None, Field(description="commands that must pass")] = None,
        claim: ClaimId = None,
    ) -> Payload:
        """Finish your work item: its claim completed with evidence."""
        return run(ctx, lambda m: done(m, id, verify or [], claim))

    @server.tool()
    def memory_work_fail(
        id: ItemId,
        reason: Annotated[str, Field(description="why it failed")],
        ctx: Context,
        claim: ClaimId = None,
    ) -> Payload:
        """Your work item failed: say why; its claim is released."""
        return run(ctx, lambda m: fail(m, id, reason, claim))

    @server.tool()
    def memory_work_return(id: ItemId, ctx: Context, claim: ClaimId = None) -> Payload:
        """Put your work item back in the queue for another; its claim is released."""
        return run(ctx, lambda m: give_back(m, id, claim))

    @server.tool()
    def memory_work_edit(
        id: ItemId,
        expect_rev: Annotated[int, Field(description="the item's rev you read", ge=1, le=MAX_INT)],
        ctx: Context,
        title: Annotated[str | None, Field(description="a new title")] = None,
        priority: Annotated[
            int | None, Field(description="higher first", ge=-MAX_INT, le=MAX_INT)
        ] = None,
        paths: Annotated[list[str] | None, Field(description="the new paths ([]: none)")] = None,
        after: Annotated[
            list[int] | None, Field(description="the new dependencies ([]: none)")
        ] = None,
        body: Annotated[str | None, Field(description="a new description")] = None,
    ) -> Payload:
        """Change a work item if it is still at expect_rev (status 'conflict' otherwise);
        a claimed item's paths and dependencies cannot change."""
        changes = {"title": title, "priority": priority, "paths": paths, "after": after}
        return run(ctx, lambda m: edit(m, id, expect_rev, changes | {"body": body}))

    @server.tool()
    def memory_work_retry(id: ItemId, ctx: Context) -> Payload:
        """Put a failed work item back in the queue; the items waiting on it follow."""
        return run(ctx, lambda m: retry(m, id))
