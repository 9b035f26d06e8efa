"""The MCP tools of mail (docs/reference.md §4.28, §11): ``memory_send`` answers what
``memkeeper send --json`` answers, ``memory_inbox_wait`` what ``inbox --wait S --json`` does
(in a worker thread; a cancelled call stops waiting); ``memory_inbox`` (``server``) lists and
acknowledges. ``register_mail`` puts them on the server (imported only by it: the
annotations of the tools are read at run time, so their names are real imports)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer  # noqa: TC002 (the tools' annotations are read at run time)
from pydantic import Field

from memkeeper.mail.messages import MAX_RECIPIENT_CHARS, MAX_TEXT_CHARS

if TYPE_CHECKING:
    from memkeeper.api import Memory
    from memkeeper.ops.claimwaits import Cancel

Payload = dict[str, Any]
MAX_WAIT_S = 600.0  # a tool call longer than ten minutes outlives most clients' timeouts


def send(memory: Memory, to: str, text: str, about: str | None) -> Payload:
    """A message from the caller's identity (never one it names) to ``to``."""
    return {"message": memory.mail.send(to, text, about=about).to_json()}


def waited(memory: Memory, timeout: float, cancel: Cancel | None = None) -> Payload:
    """What ``memkeeper inbox --wait TIMEOUT --json`` answers (``[]`` too once cancelled)."""
    from memkeeper.ops import mailwait

    found = mailwait.wait(memory.workspace, timeout, cancel=cancel)
    return {"identity": memory.agent, "messages": [m.to_json() for m in found]}


def register_mail(server: MCPServer, run: Callable[..., Payload]) -> None:
    """The mail tool on ``server`` (``run`` calls it with the caller's ``Memory`` and turns
    its errors into tool errors)."""

    @server.tool()
    def memory_send(
        to: Annotated[
            str,
            Field(
                description="an identity (as memory_claims shows it), or all",
                max_length=MAX_RECIPIENT_CHARS,
            ),
        ],
        text: Annotated[str, Field(description="the message", max_length=MAX_TEXT_CHARS)],
        ctx: Context,
        about: Annotated[
            str | None, Field(description="what it concerns: a claim id, FILE#KEY or work:ID")
        ] = None,
    ) -> Payload:
        """Send a message to another agent's inbox (or all): kept until it is acknowledged,
        delivered to it once through its hooks or its memory_inbox, signed as you."""
        return run(ctx, lambda m: send(m, to, text, about))

    @server.tool()
    async def memory_inbox_wait(
        ctx: Context,
        timeout: Annotated[
            float, Field(description="seconds to wait at most", ge=0, le=MAX_WAIT_S)
        ] = 60.0,
    ) -> Payload:
        """Block until a message for you comes (or timeout seconds pass), then what waits in
        your inbox, oldest first — without polling. Acknowledge with memory_inbox(ack=[ids])."""
        cancel = threading.Event()

        def wait() -> Payload:
            return run(ctx, lambda m: waited(m, timeout, cancel))

        try:
            return await anyio.to_thread.run_sync(wait, abandon_on_cancel=True)
        finally:
            cancel.set()  # cancelled: the waiting thread stops at its next look
