"""The dashboard's messages (docs/reference.md §4.24, §4.28): ``GET /api/messages``, the
newest messages kept — to anyone — with whether each named recipient was given and
acknowledged its own; ``POST /api/messages`` (``{"to", "text", "about"}``), a human's
message into an agent's inbox, sent as the identity the dashboard acts as (``serve``'s,
``human`` by default: never one the page names) with the token in its header, as every
write of the dashboard is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Route

from memkeeper.errors import Invalid
from memkeeper.mail.messages import ALL

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from starlette.requests import Request
    from starlette.responses import Response

    from memkeeper.api import Memory
    from memkeeper.memories import Memories

    Handler = Callable[[Request], Awaitable[Response]]
    Guard = Callable[..., Handler]

SHOWN = 100  # the newest messages the page lists


def recent(memory: Memory, limit: int = SHOWN) -> dict[str, Any]:
    """The newest ``limit`` messages, newest first, each with its named recipient's
    ``delivered_at`` and ``acked_at`` (a message to all has none: each recipient has its own)."""
    ws = memory.workspace
    if not ws.has_store:
        return {"identity": memory.agent, "messages": []}
    kept = ws.store.mail.kept_messages()[-limit:]
    named = {row[1] for row in kept if row[1] != ALL}
    states = {
        (to, m.id): m for to in sorted(named) for m in ws.store.mail.messages_for(to, acked=True)
    }
    out = []
    for message_id, to, *_ in reversed(kept):
        found = states.get((to, message_id)) or ws.store.mail.message(message_id)
        if found is not None:
            out.append(found.to_json())
    return {"identity": memory.agent, "messages": out}


def mail_routes(guard: Guard, memories: Memories, body: Callable[..., Any]) -> list[Route]:
    """The routes, each behind the app's ``guard`` (host, token); ``body`` reads a JSON body
    within the app's bound."""

    async def listing(request: Request) -> Response:
        payload = await run_in_threadpool(lambda: recent(memories.get()))
        return JSONResponse({"status": "ok", **payload})

    async def send(request: Request) -> Response:
        given = await body(request)
        to, text, about = given.get("to"), given.get("text"), given.get("about") or None
        if not isinstance(to, str) or not isinstance(text, str):
            raise Invalid("give 'to' (an identity, or all) and 'text' as strings")
        if about is not None and not isinstance(about, str):
            raise Invalid("'about' is a string: a claim id, FILE#KEY or work:ID")
        sent = await run_in_threadpool(lambda: memories.get().mail.send(to, text, about=about))
        return JSONResponse({"status": "ok", "message": sent.to_json()})

    return [
        Route("/api/messages", guard(listing), methods=["GET"]),
        Route("/api/messages", guard(send, post=True), methods=["POST"]),
    ]
