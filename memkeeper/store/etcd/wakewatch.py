"""Waking a local waiter from any machine (docs/reference.md §12): a watch on the keys whose
change concerns it, which wakes it through its FIFO (``fs.wakeups.Inbox.poke``).

A claim's waiter watches its wake key (``P/wake/<request id>``, put by the lease operation
that changed what it waits for: ``claims.wakeups``); a work waiter, the work items
(``P/work/``) and the ends of claims (a ``P/lease/claim\\0`` key deleted: released, or ended by
its etcd lease). One thread follows each range (``watch.LiveWatch``: it stays on a member that
answers) from the revision after the one read when the watch is made — before the waiter's
next look, so nothing after that look is missed; a watch that breaks wakes the waiter too,
which then looks at its backstop cap.
"""

from __future__ import annotations

import contextlib
import threading

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd import keys
from memkeeper.store.etcd.watch import LiveWatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from memkeeper.store.etcd import EtcdStore
    from memkeeper.store.etcd.wire import KeyValue

    Wanted = Callable[[str, KeyValue], bool]


def _any(kind: str, kv: KeyValue) -> bool:
    return True


def _deleted(kind: str, kv: KeyValue) -> bool:
    return kind == "DELETE"


class WakeWatch:
    """Calls ``wake`` (from its threads) at each wanted change of its ranges, until closed."""

    def __init__(
        self,
        store: EtcdStore,
        ranges: Iterable[tuple[bytes, bytes | None, Wanted]],
        wake: Callable[[], None],
    ) -> None:
        """``ranges``: each ``(key, range_end, wanted)`` — ``range_end`` None for one key,
        ``wanted(kind, kv)`` whether an event (``PUT`` or ``DELETE``) wakes."""
        self._wake = wake
        self._watches: list[LiveWatch] = []
        todo = list(ranges)
        # The revision now, before any thread starts: what changes after it is delivered.
        start = store.gateway.range(todo[0][0], keys_only=True, limit=1)[0] + 1
        for key, end, wanted in todo:
            watch = LiveWatch(store.gateway.alike(), key, end)
            self._watches.append(watch)
            threading.Thread(
                target=self._run, args=(watch, start, wanted), name="memkeeper-wake-watch",
                daemon=True,
            ).start()  # fmt: skip

    def _run(self, watch: LiveWatch, start: int, wanted: Wanted) -> None:
        # Whatever breaks the watch (compaction, no member answers, the close), the waiter
        # looks again: at once, and then at its cap.
        with contextlib.suppress(Exception):
            for _revision, events in watch.follow(start):
                if any(wanted(kind, kv) for kind, kv in events):
                    self._wake()
        self._wake()

    def close(self) -> None:
        for watch in self._watches:
            watch.close()


def claim_wait(store: EtcdStore, request_id: str, wake: Callable[[], None]) -> WakeWatch:
    """The watch of a queued claim request: its wake key."""
    return WakeWatch(store, [(keys.key(store.prefix, "wake", request_id), None, _any)], wake)


def work_wait(store: EtcdStore, wake: Callable[[], None]) -> WakeWatch:
    """The watch of a work waiter: any change of an item, any claim that ends."""
    items = keys.key(store.prefix, "work", "")
    claims = keys.key(store.prefix, "lease", keys.CLAIMS, "")
    return WakeWatch(
        store,
        [(items, etcdgw.prefix_end(items), _any), (claims, etcdgw.prefix_end(claims), _deleted)],
        wake,
    )
