"""New events, as they land, for every open ``/api/stream``: one poller per server.

The poller asks SQLite's ``PRAGMA data_version`` (a counter another connection's commit
bumps; it reads no table) every ``poll_s`` and reads the log only after it moved, from the
last event it saw. Each subscriber has a bounded queue: a reader too slow to keep up is
dropped (its browser reconnects with ``Last-Event-ID`` and catches up from the log), so the
server holds no history and its memory does not grow with the events it streams.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from memkeeper.api import Memory
    from memkeeper.records import Event

POLL_S = 0.05
QUEUE_SIZE = 1000  # events a subscriber may lag behind before it is dropped
BATCH = 500  # events read from the log at a time
_GONE = None  # what a dropped subscriber's queue ends with


class Broadcaster:
    """Polls the store of ``memory`` and hands each new event to every subscriber."""

    def __init__(self, memory: Memory, poll_s: float = POLL_S) -> None:
        self.memory = memory
        self.poll_s = poll_s
        self.subscribers: set[asyncio.Queue[Event | None]] = set()
        self.last_id = 0
        self.version: int | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.last_id = self._head()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for queue in list(self.subscribers):
            self._drop(queue)

    async def events(self, since: int, alive: Callable[[], bool]) -> AsyncIterator[Event]:
        """Every event after ``since`` (``last_id``: only those yet to come): first those
        already in the log, then each new one as it lands, while ``alive()`` (the client is
        still connected)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue(QUEUE_SIZE)
        self.subscribers.add(queue)  # before the backlog read: nothing falls between them
        try:
            sent = since
            while sent < self.last_id:
                backlog = self.memory.events(since=sent, limit=BATCH)
                if not backlog:
                    break
                for event in backlog:
                    yield event
                sent = backlog[-1].id
            while alive():
                try:
                    got: Event | None = await asyncio.wait_for(queue.get(), timeout=1.0)
                except TimeoutError:
                    continue
                if got is None:  # dropped: too slow, or the server stops
                    return
                if got.id > sent:
                    sent = got.id
                    yield got
        finally:
            self.subscribers.discard(queue)

    async def _run(self) -> None:
        while True:
            try:
                self.poll()
            except Exception:  # a locked or vanished store: look again next time
                self.version = None
            await asyncio.sleep(self.poll_s)

    def poll(self) -> list[Event]:
        """One look: the events committed since the last one (and handed out)."""
        ws = self.memory.workspace
        if not ws.has_store:
            return []
        version = ws.store.data_version()
        if version == self.version:
            return []
        self.version = version
        fresh: list[Event] = []
        while True:
            batch = self.memory.events(since=self.last_id, limit=BATCH)
            if not batch:
                break
            fresh += batch
            self.last_id = batch[-1].id
            for event in batch:
                for queue in list(self.subscribers):
                    try:
                        queue.put_nowait(event)
                    except asyncio.QueueFull:
                        self._drop(queue)
        return fresh

    def _head(self) -> int:
        ws = self.memory.workspace
        if not ws.has_store:
            return 0
        last = ws.store.last_event()
        return 0 if last is None else last.id

    def _drop(self, queue: asyncio.Queue[Event | None]) -> None:
        self.subscribers.discard(queue)
        while True:
            try:
                queue.get_nowait()
            except asyncio.QueueEmpty:
                break
        queue.put_nowait(_GONE)
