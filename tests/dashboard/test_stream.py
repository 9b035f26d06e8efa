"""The dashboard's event stream: the ``Broadcaster`` (one poller, a bounded queue per reader)
hands out each event once, in order — the backlog after ``since`` first, page by page, then
each new one a commit of another connection brings — drops a reader that falls too far behind
and ends every stream when it stops; and ``/api/stream`` frames each event as server-sent
events (``id:`` the event's id, ``data:`` its JSON) and resumes after ``Last-Event-ID``.
Driven in process: the broadcaster on a real store, the app through its ASGI interface."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("starlette", reason="the dashboard needs memkeeper[serve]")

from memkeeper import Memory
from memkeeper.dashboard import stream
from memkeeper.dashboard.app import build
from memkeeper.dashboard.stream import Broadcaster
from memkeeper.names import HOME_DIR, STATE_DB

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import Message

    from memkeeper.records import Event

TOKEN = "t0ken-for-tests"
LONG = 3600.0  # a poll interval that never comes round in a test: the test polls itself


@pytest.fixture
def root(sample: Path) -> Path:
    return sample  # its store is made by the first event a test writes


@pytest.fixture
def writer(root: Path) -> Iterator[Memory]:
    """Another connection to the store: its commits move the poller's ``data_version``."""
    memory = Memory.open(root, agent="writer")
    yield memory
    memory.close()


@pytest.fixture
def watched(root: Path) -> Iterator[Memory]:
    """The broadcaster's own ``Memory``, as the app gives it one of its own."""
    memory = Memory.open(root, agent="human")
    yield memory
    memory.close()


def emit(memory: Memory, count: int) -> list[int]:
    return [memory.emit("test.stream", {"n": n}).id for n in range(count)]


def ids(events: list[Event]) -> list[int]:
    return [e.id for e in events]


def live() -> bool:
    return True


def events(broadcaster: Broadcaster, since: int) -> AsyncGenerator[Event, None]:
    """A reader's stream, typed as what ``events`` makes: an async generator (``aclose``)."""
    made = broadcaster.events(since, live)
    assert isinstance(made, AsyncGenerator)
    return made


async def take(events: AsyncIterator[Event], count: int) -> list[Event]:
    got = []
    async for event in events:
        got.append(event)
        if len(got) == count:
            break
    return got


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.001)


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(main())


# -- the broadcaster -------------------------------------------------------------------------


def test_it_starts_at_the_logs_head_and_a_poll_finds_only_what_is_new(
    watched: Memory, writer: Memory
) -> None:
    before = emit(writer, 2)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            assert broadcaster.last_id == before[-1]
            assert broadcaster.poll() == []
            after = emit(writer, 3)
            assert ids(broadcaster.poll()) == after
            assert broadcaster.last_id == after[-1]
            assert broadcaster.poll() == []
        finally:
            await broadcaster.stop()

    run(main)


def test_a_poll_reads_the_log_only_once_another_connection_committed(
    watched: Memory, writer: Memory
) -> None:
    emit(writer, 1)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            broadcaster.poll()
            own = watched.emit("test.own").id  # this connection's commit: data_version stays
            assert broadcaster.poll() == []
            other = writer.emit("test.other").id
            assert ids(broadcaster.poll()) == [own, other]  # from the last event it saw
        finally:
            await broadcaster.stop()

    run(main)


def test_the_backlog_after_since_comes_first_page_by_page_then_the_new_events(
    watched: Memory, writer: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "BATCH", 2)
    backlog = emit(writer, 5)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            reader = events(broadcaster, backlog[0])  # resuming after the first event
            got = await take(reader, 4)
            assert ids(got) == backlog[1:]
            fresh = emit(writer, 3)
            assert ids(broadcaster.poll()) == fresh  # read in pages of two as well
            assert ids(await take(reader, 3)) == fresh
            await reader.aclose()
        finally:
            await broadcaster.stop()

    run(main)


def test_an_event_both_in_the_backlog_and_handed_out_comes_once(
    watched: Memory, writer: Memory
) -> None:
    backlog = emit(writer, 2)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            reader = events(broadcaster, 0)
            assert ids(await take(reader, 1)) == backlog[:1]  # subscribed, backlog under way
            (queue,) = broadcaster.subscribers
            raced = emit(writer, 1)
            broadcaster.poll()  # the new event in the queue, and ahead of the backlog's reading
            assert ids(await take(reader, 2)) == [backlog[1], *raced]  # the backlog reads it
            assert queue.qsize() == 1  # … and the queue still holds it
            following = asyncio.ensure_future(take(reader, 1))
            await until(queue.empty)  # taken from the queue and skipped, not sent again
            later = emit(writer, 1)
            broadcaster.poll()
            assert ids(await following) == later
            await reader.aclose()
        finally:
            await broadcaster.stop()

    run(main)


def test_without_since_beyond_the_head_only_new_events_come(
    watched: Memory, writer: Memory
) -> None:
    emit(writer, 3)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            reader = asyncio.ensure_future(take(broadcaster.events(broadcaster.last_id, live), 1))
            await until(lambda: bool(broadcaster.subscribers))
            fresh = emit(writer, 1)
            broadcaster.poll()
            assert ids(await reader) == fresh
        finally:
            await broadcaster.stop()

    run(main)


def test_the_backlog_is_sent_whole_and_then_a_gone_client_ends_the_stream(
    watched: Memory, writer: Memory
) -> None:
    backlog = emit(writer, 3)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            got = [e async for e in broadcaster.events(0, lambda: False)]
            assert ids(got) == backlog
            assert broadcaster.subscribers == set()
        finally:
            await broadcaster.stop()

    run(main)


def test_a_reader_too_far_behind_is_dropped_and_catches_up_from_the_log(
    watched: Memory, writer: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "QUEUE_SIZE", 2)
    emit(writer, 1)

    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            start = broadcaster.last_id
            reader = asyncio.ensure_future(take(broadcaster.events(start, live), 10))
            await until(lambda: bool(broadcaster.subscribers))
            burst = emit(writer, 3)
            assert ids(broadcaster.poll()) == burst  # one poll: three events for a queue of two
            assert await reader == []  # dropped: its stream ends, the two it held discarded
            assert broadcaster.subscribers == set()
            again = [e async for e in broadcaster.events(start, lambda: False)]
            assert ids(again) == burst  # reconnecting with its Last-Event-ID
        finally:
            await broadcaster.stop()

    run(main)


def test_stopping_ends_every_stream_and_the_poller(watched: Memory) -> None:
    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=0.001)
        await broadcaster.start()
        readers = [
            asyncio.ensure_future(take(broadcaster.events(broadcaster.last_id, live), 1))
            for _ in range(3)
        ]
        await until(lambda: len(broadcaster.subscribers) == 3)
        await broadcaster.stop()
        assert await asyncio.gather(*readers) == [[], [], []]
        assert broadcaster.subscribers == set()
        assert broadcaster._task is not None
        assert broadcaster._task.cancelled()

    run(main)


def test_a_root_without_a_store_streams_once_one_is_made(
    root: Path, watched: Memory, writer: Memory
) -> None:
    async def main() -> None:
        broadcaster = Broadcaster(watched, poll_s=LONG)
        await broadcaster.start()
        try:
            assert broadcaster.last_id == 0
            assert broadcaster.poll() == []
            assert not (root / HOME_DIR / STATE_DB).exists()  # none made to say so
            first = emit(writer, 1)
            assert ids(broadcaster.poll()) == first
        finally:
            await broadcaster.stop()

    run(main)


# -- /api/stream: server-sent events -------------------------------------------------------


class Answer:
    """A streamed response as the ASGI server saw it."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = bytearray()

    def frames(self) -> list[dict[str, str]]:
        """Each complete SSE message, its fields by name."""
        found = []
        for block in bytes(self.body).decode().split("\r\n\r\n")[:-1]:
            fields = dict(line.split(": ", 1) for line in block.split("\r\n"))
            found.append(fields)
        return found


async def get_stream(
    app: Starlette, headers: dict[str, str], query: str = "", frames: int = 0
) -> Answer:
    """GET /api/stream until ``frames`` messages came (or the answer ended), then disconnect."""
    answer, gone, asked = Answer(), asyncio.Event(), False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")
            if len(answer.frames()) >= frames:
                gone.set()

    sent = {"authorization": f"Bearer {TOKEN}", "host": "127.0.0.1:8765", **headers}
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/api/stream",
        "raw_path": b"/api/stream",
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in sent.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    async with asyncio.timeout(5):
        await app(scope, receive, send)
    return answer


def serving(root: Path, main: Callable[[Starlette], Coroutine[Any, Any, None]]) -> None:
    app = build(str(root), TOKEN, poll_s=0.005)

    async def lifespan() -> None:
        async with app.router.lifespan_context(app):
            await main(app)

    asyncio.run(lifespan())


def test_each_event_is_a_message_with_its_id_and_its_json(root: Path, writer: Memory) -> None:
    written = [writer.emit("test.stream", {"note": "caf\u00e9 \u2713", "n": n}) for n in range(2)]

    async def main(app: Starlette) -> None:
        answer = await get_stream(app, {}, "since=0", frames=2)
        assert answer.status == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert answer.headers["cache-control"] == "no-store"
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.frames() == [
            {"id": str(e.id), "data": json.dumps(e.to_json(), ensure_ascii=False)} for e in written
        ]
        assert "caf\u00e9 \u2713".encode() in answer.body  # as UTF-8, not \\u escapes

    serving(root, main)


@pytest.mark.parametrize(
    ("headers", "query", "after"),
    [
        ({"last-event-id": "2"}, "", 2),
        ({}, "since=3", 3),
        ({"last-event-id": "1"}, "since=4", 1),  # the browser's reconnect wins
        ({"last-event-id": ""}, "since=4", 4),
    ],
)
def test_a_reconnect_resumes_after_the_last_event_id(
    root: Path, writer: Memory, headers: dict[str, str], query: str, after: int
) -> None:
    written = emit(writer, 5)

    async def main(app: Starlette) -> None:
        expected = [n for n in written if n > after]
        answer = await get_stream(app, headers, query, frames=len(expected))
        assert [int(f["id"]) for f in answer.frames()] == expected

    serving(root, main)


def test_with_neither_only_events_from_now_on_come(root: Path, writer: Memory) -> None:
    emit(writer, 3)

    async def main(app: Starlette) -> None:
        streaming = asyncio.ensure_future(get_stream(app, {}, frames=1))
        broadcaster: Broadcaster = app.state.broadcaster
        await until(lambda: bool(broadcaster.subscribers))
        fresh = emit(writer, 1)
        answer = await streaming
        assert [int(f["id"]) for f in answer.frames()] == fresh

    serving(root, main)


@pytest.mark.parametrize(("headers", "query"), [({"last-event-id": "abc"}, ""), ({}, "since=1.5")])
def test_a_resume_point_that_is_no_whole_number_is_a_clear_400(
    root: Path, headers: dict[str, str], query: str
) -> None:
    async def main(app: Starlette) -> None:
        answer = await get_stream(app, headers, query)
        assert answer.status == 400
        payload = json.loads(bytes(answer.body))
        assert payload["status"] == "invalid"
        assert "since must be a whole number" in payload["message"]

    serving(root, main)


def test_the_stream_needs_the_token(root: Path) -> None:
    async def main(app: Starlette) -> None:
        answer = await get_stream(app, {"authorization": "Bearer nope"})
        assert answer.status == 401
        assert json.loads(bytes(answer.body))["status"] == "unauthorized"

    serving(root, main)
