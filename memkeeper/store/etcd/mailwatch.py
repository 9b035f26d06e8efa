"""A wait for mail on etcd (docs/reference.md §4.28, ``inbox --wait``): a watch on the
recipients' index keys (``P/to/``, ``keys``), so that a message posted from any machine wakes
the waiter at once. One thread follows the watch (``watch.LiveWatch``: it stays on a member
that answers) from the revision after the one read when the wait began, and sets ``moved`` at
every change; a watch that breaks sets it too, and the waiter looks again at its cap."""

from __future__ import annotations

import contextlib
import threading

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.watch import LiveWatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


class MailWatch:
    """Wakes a waiter when a message is posted to anyone (the waiter looks whose it is)."""

    def __init__(self, store: EtcdStore) -> None:
        prefix = store.prefix + b"to/"
        # The revision now, read before the thread starts: nothing posted after the waiter's
        # first look is missed, however long the thread takes to open its stream.
        start = store.gateway.range(prefix, keys_only=True, limit=1)[0] + 1
        self.moved = threading.Event()
        self._watch = LiveWatch(store.gateway.alike(), prefix, etcdgw.prefix_end(prefix))
        self._thread = threading.Thread(
            target=self._run, args=(start,), name="memkeeper-mail-watch", daemon=True
        )
        self._thread.start()

    def _run(self, start: int) -> None:
        # Whatever breaks the watch (compaction, no member answers, the close), the waiter
        # looks again: at once, and then at its cap.
        with contextlib.suppress(Exception):
            for _revision, _events in self._watch.follow(start):
                self.moved.set()
        self.moved.set()

    def block(self, timeout: float) -> bool:
        """Sleep until a change or ``timeout`` seconds; True when woken by one."""
        woken = self.moved.wait(timeout)
        self.moved.clear()
        return woken

    def close(self) -> None:
        self._watch.close()
