"""``memkeeper mcp``: the MCP server on stdio (docs/reference.md §4.21), with the official SDK
(extra ``memkeeper[mcp]``, imported only by this command: ``import mcp`` alone costs ~0.4 s).

Each tool is one function of ``memkeeper.mcpserver.tools`` with its input schema spelled here
(the SDK derives the schema from the annotations, the output schema from the return type).
The SDK runs a plain function in a worker thread; each thread keeps its own ``Memory`` (an
SQLite connection belongs to one thread), opened on first use with the identity the session
has: ``--agent``, else ``$MEMKEEPER_AGENT``, else the agent session that started it (for Claude
Code ``claude-code:$CLAUDE_CODE_SESSION_ID``: the same identity as its hook and its shell's
commands), else ``mcp:`` plus the client's name from the initialization. ``memory_claim``
with ``wait`` runs in its own thread and gives its place in the queue up as soon as the client
cancels the call. The transport is the SDK's stdio one
without its thread hops (``memkeeper.mcpserver.stdio``).

No ``from __future__ import annotations`` here: the SDK reads these annotations at run time.
"""

import os
import threading
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from memkeeper.api import Memory
from memkeeper.errors import MemkeeperError
from memkeeper.identity import sessions
from memkeeper.limits import MAX_INT
from memkeeper.mcpserver import stdio, tools
from memkeeper.memories import Memories

Payload = dict[str, Any]
NOTICES_EVERY_S = 1.0  # a result looks for new messages at most this often
INSTRUCTIONS = (
    "memkeeper guards this repository's shared memory files (CLAUDE.md, AGENTS.md, memory/…). "
    "Change a section with memory_read then memory_patch(ref, body, expect_rev); on "
    "status 'conflict' the result carries the section as it is now in 'current': merge your "
    "change into it and patch again with its rev (with merge=true memkeeper merges it for "
    "you when the two changes touch different lines). Add to append-only logs with "
    "memory_append. Claim what you are about to work on with memory_claim and release it. "
    "Messages for you (a request to release a claim, a handoff) come in a result's 'notices' "
    "and in memory_inbox; acknowledge them with memory_inbox(ack=[ids])."
)

Ref = Annotated[str, Field(description="a section: PATH#KEY, e.g. CLAUDE.md#build")]
FilePath = Annotated[str, Field(description="a memory file, relative to the repository root")]
Rev = Annotated[
    int,
    Field(description="the section's rev from memory_read (compare-and-swap)", ge=0, le=MAX_INT),
]
ClaimId = Annotated[str, Field(description="a claim's id from memory_claim")]
ClaimRev = Annotated[
    int | None, Field(description="the claim record's rev you last saw", ge=0, le=MAX_INT)
]
Ttl = Annotated[float | None, Field(description="seconds (default: the policy's default_ttl)")]


class Server(MCPServer):
    """The SDK's server on memkeeper's stdio transport, with the session's ``Memories``."""

    def __init__(self, memories: Memories, **settings: Any) -> None:
        super().__init__("memkeeper", **settings)
        self.memories = memories

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        """The SDK's call; arguments that fail the input schema answer ``status: invalid``
        with what is wrong with each, as every other bad input does (not a tool error)."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            tool = self._tool_manager.get_tool(name)
            payload = tools.invalid_arguments(name, exc.__cause__.errors())
            if tool is None:
                raise
            return tool.fn_metadata.convert_result(payload)

    async def run_stdio_async(self) -> None:
        low = self._lowlevel_server  # what the SDK's own run_stdio_async runs on its streams
        async with stdio.stdio() as (read_stream, write_stream):
            await low.run(read_stream, write_stream, low.create_initialization_options())


def client_agent(ctx: Context | None) -> str:
    """``mcp:`` plus the client's name from its initialization (``mcp:client`` if none)."""
    name = "client"
    try:
        params = ctx.session.client_params if ctx is not None else None
        if params is not None and params.client_info.name:
            name = params.client_info.name
    except Exception:  # the SDK changed shape: an identity is still better than a crash
        pass
    return f"mcp:{name}"


def build(root: str | None = None, agent: str | None = None) -> Server:
    """The server with every tool of §11 registered."""
    named, _ = sessions.chosen(agent, os.environ, "")
    memories = Memories(root, named or None)
    server = Server(memories, instructions=INSTRUCTIONS)

    checked = [float("-inf")]  # when this session was last looked up for notices

    def run(ctx: Context | None, call: Callable[[Memory], Payload]) -> Payload:
        memory = memories.get(lambda: client_agent(ctx))
        payload = tools.answer(lambda: call(memory))
        now = memory.now()
        if now - checked[0] < NOTICES_EVERY_S:
            return payload
        checked[0] = now
        try:
            return tools.with_notices(memory, payload)
        except MemkeeperError:  # a notice never costs the call its answer
            return payload

    # The reads and the patch run on the event loop, which saves the hop to a worker thread
    # and back (0.3-0.6 ms, two wake-ups: a tenth of a patch's round trip). A patch holds the
    # loop for its one log sync (and a wait for another writer's file lock, itself one write
    # long); one client's requests come one at a time. The rarer writes (append, renew,
    # release, emit) and the check, which parses every file, run in the SDK's worker threads,
    # and so does a claim, which may queue: a slow one never stalls the loop (or a cancel).

    @server.tool()
    async def memory_sections(path: FilePath, ctx: Context) -> Payload:
        """The sections of a memory file: key, title, level, rev, hash and lines."""
        return run(ctx, lambda m: tools.sections(m, path))

    @server.tool()
    async def memory_read(ref: Ref, ctx: Context) -> Payload:
        """One section (PATH#KEY) or a whole file: its text, rev and hash."""
        return run(ctx, lambda m: tools.read(m, ref))

    @server.tool()
    async def memory_patch(
        ref: Ref,
        expect_rev: Rev,
        ctx: Context,
        body: Annotated[str | None, Field(description="the section's new body")] = None,
        dmp: Annotated[str | None, Field(description="a diff-match-patch patch")] = None,
        expect_file_hash: Annotated[str | None, Field(description="sha256:… of the file")] = None,
        claim: Annotated[str | None, Field(description="the claim this write is under")] = None,
        merge: Annotated[
            bool,
            Field(
                description="when expect_rev is stale, merge this change into the current "
                "body (lands when the two changes touch different lines)"
            ),
        ] = False,
    ) -> Payload:
        """Replace one section's body if it is still at expect_rev; a stale rev is a result
        with status 'conflict' and the section as it is now in 'current' (with merge: the
        change merged in, "merged": true, when the two changes touch different lines)."""
        return run(
            ctx,
            lambda m: tools.patch(m, ref, expect_rev, body, dmp, expect_file_hash, claim, merge),
        )

    @server.tool()
    def memory_append(
        path: FilePath, text: Annotated[str, Field(description="the entry")], ctx: Context
    ) -> Payload:
        """Add an entry at the end of an append-only file (history is never rewritten)."""
        return run(ctx, lambda m: tools.append(m, path, text))

    @server.tool()
    async def memory_claim(
        targets: Annotated[list[str], Field(description="paths, globs or PATH#KEY sections")],
        ctx: Context,
        mode: Annotated[str, Field(description="'write' or 'read'")] = "write",
        ttl: Ttl = None,
        priority: Annotated[
            int, Field(description="higher goes first in the queue", ge=-MAX_INT, le=MAX_INT)
        ] = 0,
        strict: Annotated[bool, Field(description="refuse others' writes under it")] = False,
        wait: Annotated[float | None, Field(description="queue up to this many s")] = None,
        objective: Annotated[str, Field(description="what the claim is for")] = "",
        request_release: Annotated[
            bool, Field(description="if busy or queued: ask each holder in the way to release")
        ] = False,
    ) -> Payload:
        """Take a claim; status 'busy' names the holders. With wait, queue for it (the call
        can be cancelled: the place in the queue is given up)."""
        cancel = threading.Event()

        def take() -> Payload:
            return run(
                ctx,
                lambda m: tools.claim(
                    m,
                    targets,
                    mode,
                    ttl,
                    priority,
                    strict,
                    wait,
                    objective,
                    cancel,
                    request_release,
                ),
            )

        try:
            return await anyio.to_thread.run_sync(take, abandon_on_cancel=True)
        finally:
            cancel.set()  # cancelled: the waiting thread leaves the queue and ends

    @server.tool()
    def memory_renew(id: ClaimId, ctx: Context, ttl: Ttl = None) -> Payload:
        """Keep a claim of yours alive: it expires ttl seconds from now."""
        return run(ctx, lambda m: tools.renew(m, id, ttl))

    @server.tool()
    def memory_release(id: ClaimId, ctx: Context) -> Payload:
        """Give a claim of yours back."""
        return run(ctx, lambda m: tools.release(m, id))

    @server.tool()
    def memory_claims(
        ctx: Context,
        search: Annotated[
            str | None, Field(description="rank live claims by meaning of their objective")
        ] = None,
        limit: Annotated[int, Field(description="with search: at most this many", ge=1)] = 10,
    ) -> Payload:
        """Every live claim and queued request; with search, the live claims whose objective
        is closest in meaning (needs memkeeper[semantic])."""
        if search is None:
            return run(ctx, tools.claims)
        return run(ctx, lambda m: tools.search_claims(m, search, limit))

    @server.tool()
    def memory_claim_show(id: ClaimId, ctx: Context) -> Payload:
        """A claim's record, whatever its state: plan, state, rev, history, evidence."""
        return run(ctx, lambda m: tools.claim_record(m, id))

    @server.tool()
    def memory_claim_scope(
        id: ClaimId,
        ctx: Context,
        add: Annotated[list[str] | None, Field(description="targets to add")] = None,
        remove: Annotated[list[str] | None, Field(description="targets to drop")] = None,
        expect_rev: ClaimRev = None,
    ) -> Payload:
        """Change a live claim's targets; added ones are checked as a new claim would be
        (status 'busy' names the holders, and nothing changes)."""
        return run(ctx, lambda m: tools.claim_scope(m, id, add or [], remove or [], expect_rev))

    @server.tool()
    def memory_complete(
        id: ClaimId,
        ctx: Context,
        verify: Annotated[
            list[str] | None, Field(description="shell commands to run in the worktree")
        ] = None,
        evidence: Annotated[
            str | None, Field(description="your own report (self-reported)")
        ] = None,
        expect_rev: ClaimRev = None,
    ) -> Payload:
        """Complete a claim with the evidence memkeeper gathers (git, memory revisions) after
        running each verify command; one failing is status 'failed' and the claim stays
        active."""
        return run(ctx, lambda m: tools.complete(m, id, verify or [], evidence, expect_rev))

    @server.tool()
    def memory_abandon(
        id: ClaimId,
        reason: Annotated[str, Field(description="why, for whoever takes it over")],
        ctx: Context,
        expect_rev: ClaimRev = None,
        message: Annotated[str, Field(description="to whoever takes it over")] = "",
    ) -> Payload:
        """Give a claim up, recording head, changed files and memory revisions."""
        return run(ctx, lambda m: tools.abandon(m, id, reason, expect_rev, message))

    @server.tool()
    def memory_takeover(
        id: ClaimId, ctx: Context, ttl: Ttl = None, expect_rev: ClaimRev = None
    ) -> Payload:
        """Claim an abandoned or expired claim's targets after the grace period; the answer
        starts with the predecessor's record (its commands are never run again)."""
        return run(ctx, lambda m: tools.takeover(m, id, ttl, expect_rev))

    @server.tool()
    async def memory_events(
        ctx: Context,
        since: Annotated[int, Field(description="events after this id", ge=0, le=MAX_INT)] = 0,
        limit: Annotated[
            int, Field(description="at most this many", ge=0, le=MAX_INT)
        ] = tools.EVENTS_LIMIT,
    ) -> Payload:
        """Coordination events after an id, oldest first; next_since pages on."""
        return run(ctx, lambda m: tools.events(m, since, limit))

    @server.tool()
    def memory_emit(
        type: Annotated[str, Field(description="the event type, e.g. task.completed")],
        ctx: Context,
        data: Annotated[dict[str, Any] | None, Field(description="a JSON object")] = None,
    ) -> Payload:
        """Record a coordination event (generated pages may show it)."""
        return run(ctx, lambda m: tools.emit(m, type, data))

    @server.tool()
    def memory_check(
        ctx: Context,
        paths: Annotated[list[str] | None, Field(description="files (default: all)")] = None,
    ) -> Payload:
        """Validate memory files against the policy; status 'failed' lists violations."""
        return run(ctx, lambda m: tools.check(m, paths or []))

    @server.tool()
    async def memory_inbox(
        ctx: Context,
        ack: Annotated[
            list[Annotated[int, Field(ge=0, le=MAX_INT)]] | None,
            Field(description="ids of messages to acknowledge first"),
        ] = None,
    ) -> Payload:
        """Messages for you not yet acknowledged (a request to release your claim, a
        handoff…), oldest first, and notices (a claim of yours about to expire)."""
        return run(ctx, lambda m: tools.inbox(m, ack or []))

    from memkeeper.mcpserver.meetingtools import register_meetings

    register_meetings(server, run)
    from memkeeper.mcpserver.mailtools import register_mail

    register_mail(server, run)

    from memkeeper.mcpserver.worktools import register_work

    register_work(server, run)
    return server


def serve(root: str | None, agent: str | None) -> int:
    """Serve on stdio until the client closes the connection."""
    server = build(root, agent)
    try:
        server.run("stdio")
    finally:
        server.memories.close()
    return 0
