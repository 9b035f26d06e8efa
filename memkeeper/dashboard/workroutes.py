"""The dashboard's work queue (docs/reference.md §4.24, §4.33): ``GET /api/work``, who works
on what — each claimed item with its holder, claim, since when and idle mark — the ready list
in the order ``work next`` hands it out, and the count of items in each state. Read-only: work
is taken and ended by the agents (``work next``, ``work done``), never from the page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Route

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from starlette.requests import Request
    from starlette.responses import Response

    from memkeeper.memories import Memories

    Handler = Callable[[Request], Awaitable[Response]]
    Guard = Callable[..., Handler]


def work_routes(guard: Guard, memories: Memories) -> list[Route]:
    """The route, behind the app's ``guard`` (host, token)."""

    async def queue(request: Request) -> Response:
        payload = await run_in_threadpool(lambda: memories.get().work.board())
        return JSONResponse({"status": "ok", **payload})

    return [Route("/api/work", guard(queue), methods=["GET"])]
