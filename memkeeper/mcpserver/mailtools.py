"""The MCP tool that sends a message (docs/reference.md §4.28, §11): ``memory_send`` answers
what ``memkeeper send --json`` answers; ``memory_inbox`` (``server``) lists and acknowledges.
``register_mail`` puts it on the server (imported only by it: the annotations of the tools
are read at run time, so their names are real imports)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer  # noqa: TC002 (the tools' annotations are read at run time)
from pydantic import Field

from memkeeper.mail.messages import MAX_RECIPIENT_CHARS, MAX_TEXT_CHARS

if TYPE_CHECKING:
    from memkeeper.api import Memory

Payload = dict[str, Any]


def send(memory: Memory, to: str, text: str, about: str | None) -> Payload:
    """A message from the caller's identity (never one it names) to ``to``."""
    return {"message": memory.mail.send(to, text, about=about).to_json()}


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
