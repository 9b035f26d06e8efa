"""Waking whoever waits for an event as soon as it is recorded, without polling the store
(docs/reference.md §4.14): ``store_moves`` yields each time the store may hold new events.

- The local store (SQLite): every commit writes the store's log (``state.db-wal``) in the
  memory home; an inotify watch on that directory (``fs.dirwatch``: the waiter sleeps in
  ``poll()``, no polling loop) wakes it about a millisecond after the commit. Where inotify is
  not to be had, watchfiles' watcher does it (it wakes every ``STEP_MS`` to look).
- A shared store (etcd): the daemon's watch on the event keys (``daemon.storewatch``) sets
  ``moved`` on every new event.

After a change it yields twice more (``LOOK_AGAIN_S``): a commit is readable only a moment
after the write that woke the reader. Either way it also yields every ``HEARTBEAT_S`` (a
safety net: a watch that broke silently costs at most that much), and once at the start.
Readers read the events after the last they saw each time it yields: a wake-up may be
spurious, never a miss.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator

    from memkeeper.ops.workspace import Workspace

HEARTBEAT_S = 5.0
STEP_MS = 5  # watchfiles (no inotify): the quiet after a change before waking
DEBOUNCE_MS = 50  # watchfiles: the longest a burst of changes delays a wake-up
STOP_CHECK_S = 0.2  # how soon a stop is noticed while the store is quiet
# After the last change, look again this long after it, then this long after that: a commit's
# pages reach the log (the change that wakes us) a moment before the commit can be read (its
# index is in shared memory, which no watch sees) — a reader woken in between finds nothing.
LOOK_AGAIN_S = (0.005, 0.05)


class StopEvent(Protocol):
    def is_set(self) -> bool: ...


def store_moves(ws: Workspace, stop: StopEvent) -> Iterator[None]:
    """Yield now, then whenever the store may hold new events, until ``stop`` is set."""
    if ws.shared:
        yield from _shared_moves(ws, stop)
    else:
        yield from _local_moves(ws.home, stop)


def _local_moves(home: str, stop: StopEvent) -> Iterator[None]:
    from memkeeper.fs.dirwatch import open_watch

    os.makedirs(home, exist_ok=True)
    watch = open_watch(home)  # up before the first read: nothing recorded between is missed
    if watch is None:
        yield from _watchfiles_moves(home, stop)
        return
    try:
        yield
        quiet = 0.0
        owed: tuple[float, ...] = ()  # the looks still due after the last change
        while not stop.is_set():
            step = owed[0] if owed else STOP_CHECK_S
            if watch.wait(step):
                quiet, owed = 0.0, LOOK_AGAIN_S
                yield
            elif owed:
                quiet, owed = quiet + step, owed[1:]
                yield
            elif quiet >= HEARTBEAT_S:
                quiet = 0.0
                yield
            else:
                quiet += STOP_CHECK_S
    finally:
        watch.close()


def _watchfiles_moves(home: str, stop: StopEvent) -> Iterator[None]:
    """Where inotify is not to be had: watchfiles' watcher (which wakes every ``STEP_MS`` to
    look), up before the first read as well."""
    from watchfiles._rust_notify import RustNotify

    with RustNotify([home], False, False, 0, False, True) as watcher:
        yield
        owed: tuple[float, ...] = ()
        while not stop.is_set():
            wait_s = owed[0] if owed else HEARTBEAT_S
            got = watcher.watch(DEBOUNCE_MS, STEP_MS, round(wait_s * 1000), stop)
            if got in ("stop", "signal"):
                return
            owed = owed[1:] if got == "timeout" else LOOK_AGAIN_S
            yield


def _shared_moves(ws: Workspace, stop: StopEvent) -> Iterator[None]:
    from memkeeper.daemon.storewatch import StoreWatch
    from memkeeper.store.etcd import EtcdStore

    store = ws.store
    assert isinstance(store, EtcdStore)
    moved = StoreWatch(store).moved  # set at once: the first read
    quiet = 0.0
    while not stop.is_set():
        if moved.wait(STOP_CHECK_S) or quiet >= HEARTBEAT_S:
            moved.clear()  # before the read: an event after it sets it again
            quiet = 0.0
            yield
        else:
            quiet += STOP_CHECK_S
