"""``memkeeper serve``: the live dashboard for the humans watching a fleet (docs/reference.md
§4.24) — a Starlette app, served by uvicorn on 127.0.0.1.

Everything it shows comes through ``Memory`` (``ops/views.py``), as the CLI's listings do;
``/api/stream`` is server-sent events from one ``stream.Broadcaster``. Safety: every API
request needs the access token (``Authorization: Bearer T``, or ``?token=T`` on a GET — the
page's event stream, which cannot send a header), compared in constant time; a POST needs the
header. The token is never put in a cookie: cookies ignore ports, so a browser would send one
to every other server on this host. The page and its script carry no secret and need no
token (the script keeps the token in the tab's ``sessionStorage``, which is per origin, port
included). The Host header must name the loopback address unless ``allow_remote`` (a page
elsewhere cannot rebind a name to us);
bodies are limited to ``MAX_BODY`` bytes; a private file's text is never served; the page
inserts everything agents wrote as text, never as markup, and its Content-Security-Policy
allows no inline script.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import ipaddress
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memkeeper.api import Memory
from memkeeper.dashboard.mailroutes import mail_routes
from memkeeper.dashboard.signatures import Marks
from memkeeper.dashboard.stream import Broadcaster
from memkeeper.dashboard.workroutes import work_routes
from memkeeper.errors import Busy, Conflict, Invalid, MemkeeperError, Refused
from memkeeper.memories import Memories

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from starlette.requests import Request

    Handler = Callable[[Request], Awaitable[Response]]

MAX_BODY = 64 * 1024
EVENTS_LIMIT = 500
HOW = ("keep-human", "take-generated")
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ApiError(Exception):
    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message


def build(
    root: str | None,
    token: str,
    *,
    agent: str = "human",
    allow_remote: bool = False,
    poll_s: float | None = None,
) -> Starlette:
    """The app for the memory root ``root`` (discovered like the CLI's when None)."""
    memories = Memories(root, agent)
    stream_memory = Memory.open(root, agent=agent)
    broadcaster = Broadcaster(stream_memory, *(() if poll_s is None else (poll_s,)))
    marks = Marks()
    page = _page()

    def guard(handler: Handler, *, post: bool = False, public: bool = False) -> Handler:
        async def endpoint(request: Request) -> Response:
            response: Response
            try:
                _check_host(request, allow_remote)
                if not public:
                    _authorize(request, token, post=post)
                response = await handler(request)
            except ApiError as exc:
                response = _error(exc.code, exc.status, exc.message)
            except MemkeeperError as exc:
                response = _memkeeper_error(exc)
            response.headers.update(SECURITY_HEADERS)
            return response

        return endpoint

    def api(view: Callable[[Memory, Request], dict[str, Any]]) -> Handler:
        async def handler(request: Request) -> Response:
            payload = await run_in_threadpool(lambda: view(memories.get(), request))
            return JSONResponse({"status": "ok", **payload})

        return handler

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            raise ApiError(404, "not_found", f"no static file {name!r}")
        data = resources.files("memkeeper.dashboard").joinpath("static", name).read_bytes()
        return Response(data, media_type=STATIC[name])

    async def stream(request: Request) -> Response:
        given = request.headers.get("last-event-id") or request.query_params.get("since")
        since = broadcaster.last_id if given is None else _int(given)  # default: new ones

        async def messages() -> AsyncIterator[dict[str, str]]:
            connected = True

            def alive() -> bool:
                return connected

            async for event in broadcaster.events(since, alive):
                if await request.is_disconnected():
                    connected = False
                    break
                data = json.dumps(marks.shown(stream_memory, [event])[0], ensure_ascii=False)
                yield {"id": str(event.id), "data": data}

        return EventSourceResponse(messages(), ping=15, headers=dict(SECURITY_HEADERS))

    async def resolve(request: Request) -> Response:
        rec_id = _int(request.path_params["rec_id"], "reconciliation id")
        body = await _json_body(request)
        how = body.get("how")
        if how not in HOW:
            raise ApiError(400, "invalid", f"'how' must be one of {', '.join(HOW)}, not {how!r}")
        done = await run_in_threadpool(lambda: memories.get().resolve(rec_id, str(how)))
        return JSONResponse({"status": "ok", "reconciliation": done.to_json()})

    routes = [
        Route("/", guard(index, public=True)),
        Route("/static/{name}", guard(static, public=True)),
        Route("/api/status", guard(api(lambda m, r: m.status()))),
        Route("/api/claims", guard(api(lambda m, r: m.waiters()))),
        Route("/api/claim-records", guard(api(_records))),
        Route("/api/meetings", guard(api(_meetings))),
        Route("/api/files", guard(api(lambda m, r: {"files": m.files()}))),
        Route("/api/sections", guard(api(_sections))),
        Route("/api/events", guard(api(functools.partial(_events, marks)))),
        Route(
            "/api/reconciliations",
            guard(api(lambda m, r: {"reconciliations": m.reconciliation_diffs()})),
        ),
        Route("/api/metrics", guard(api(_metrics))),
        Route("/api/stream", guard(stream)),
        Route(
            "/api/reconciliations/{rec_id}/resolve",
            guard(resolve, post=True),
            methods=["POST"],
        ),
    ]
    routes += mail_routes(guard, memories, _json_body)
    routes += work_routes(guard, memories)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await broadcaster.start()
        try:
            yield
        finally:
            await broadcaster.stop()
            memories.close()
            stream_memory.close()

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, "not_found", f"no such page: {request.url.path}")

    async def wrong_method(request: Request, exc: Exception) -> Response:
        return _error(405, "invalid", f"{request.method} is not allowed on {request.url.path}")

    handlers = {404: not_found, 405: wrong_method}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    app.state.broadcaster = broadcaster
    return app


# -- the endpoints' reading of a request ------------------------------------------------------


def _sections(memory: Memory, request: Request) -> dict[str, Any]:
    path = request.query_params.get("path")
    if not path:
        raise ApiError(400, "invalid", "give ?path=FILE (and &key=KEY for one section)")
    key = request.query_params.get("key")
    if key is not None:
        return memory.history(f"{path}#{key}")
    found = memory.file(path)
    if found is None:
        rel = memory.workspace.relpath(path)
        raise ApiError(404, "not_found", f"{rel} is not a managed file")
    return {"path": found["path"], "class": found["class"], "sections": found["sections"]}


RECORDS_SHOWN = 200


def _records(memory: Memory, request: Request) -> dict[str, Any]:
    """The claims' records, newest grant first (the last ``RECORDS_SHOWN``), with the count
    in each state."""
    found = memory.claims.records()
    by_state: dict[str, int] = {}
    for record in found:
        by_state[record.state] = by_state.get(record.state, 0) + 1
    shown = [r.to_json() for r in reversed(found[-RECORDS_SHOWN:])]
    return {"records": shown, "by_state": by_state}


def _meetings(memory: Memory, request: Request) -> dict[str, Any]:
    """Meetings not yet resolved (each with its deadline) and the day's release requests."""
    from memkeeper.ops import releases

    found = [m.to_json() for m in memory.meetings.list()]
    return {"meetings": found, "release_requests": releases.view(memory.workspace)}


def _metrics(memory: Memory, request: Request) -> dict[str, Any]:
    return {**memory.metrics(), "contention": memory.contention()}


def _events(marks: Marks, memory: Memory, request: Request) -> dict[str, Any]:
    since = _int(request.query_params.get("since"), "since")
    limit = min(_int(request.query_params.get("limit") or str(EVENTS_LIMIT), "limit"), 500)
    if limit <= 0:
        raise ApiError(400, "invalid", "limit must be a positive number")
    events = memory.events(since=since, limit=limit)
    return {
        "events": marks.shown(memory, events),
        "next_since": events[-1].id if events else since,
    }


async def _json_body(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and _int(declared, "Content-Length") > MAX_BODY:
        raise ApiError(413, "invalid", f"the body is larger than {MAX_BODY} bytes")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise ApiError(413, "invalid", f"the body is larger than {MAX_BODY} bytes")
    try:
        body = json.loads(data or b"{}")
    except ValueError as exc:
        raise ApiError(400, "invalid", f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "invalid", "the body must be a JSON object")
    return body


def _int(text: str | None, what: str = "since") -> int:
    if text is None or text == "":
        return 0
    from memkeeper.limits import MAX_INT

    try:
        value = int(text)
    except ValueError:
        raise ApiError(400, "invalid", f"{what} must be a whole number, not {text!r}") from None
    if not 0 <= value <= MAX_INT:
        raise ApiError(400, "invalid", f"{what} must be a whole number from 0 to {MAX_INT}")
    return value


# -- safety ------------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a Host header's name, or ``--host``) names this machine's loopback
    interface: ``localhost``, or an address of 127.0.0.0/8 or ``::1`` (bracketed or not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_host(request: Request, allow_remote: bool) -> None:
    if allow_remote:
        return
    host = request.headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if not is_loopback(name):
        raise ApiError(403, "forbidden", f"Host {host!r} is not this machine's loopback address")


def _authorize(request: Request, token: str, *, post: bool) -> None:
    """``ApiError`` 401 unless the request carries the token: in the header, or — a GET — in
    the query string. A cookie never counts (see the module's docstring)."""
    header = request.headers.get("authorization", "")
    if header.startswith("Bearer ") and _same(header[7:], token):
        return
    if post:
        raise ApiError(401, "unauthorized", "a POST needs the header Authorization: Bearer TOKEN")
    if _same(request.query_params.get("token", ""), token):
        return
    raise ApiError(
        401, "unauthorized", "this dashboard needs its access token: open the URL memkeeper "
        "serve printed (…/?token=…), or send Authorization: Bearer TOKEN"
    )  # fmt: skip


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode())


def _page() -> bytes:
    """The page: the same bytes for everyone (the script asks the API for the rest)."""
    return resources.files("memkeeper.dashboard").joinpath("static", "index.html").read_bytes()


# -- answers -------------------------------------------------------------------------------------


def _error(code: int, status: str, message: str) -> Response:
    return JSONResponse({"status": status, "message": message}, status_code=code)


def _memkeeper_error(exc: MemkeeperError) -> Response:
    payload = exc.to_json()
    if isinstance(exc, Invalid):
        unknown = str(exc.message).startswith(("no reconciliation", "there is no"))
        code = 404 if unknown else 400
    elif isinstance(exc, Refused):
        code = 403
    elif isinstance(exc, Conflict | Busy):
        code = 409
    else:
        code = 500
    return JSONResponse(payload, status_code=code)
