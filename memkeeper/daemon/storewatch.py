"""With a shared store: an etcd watch on the event log, so that the daemon reads the store
only when another writer recorded something (reference §12).

A thread keeps one watch open on the events' keys from the revision after the last it saw;
each response with events sets ``moved``, which the daemon's tick clears before it reads the
events (so none is missed between the two). The watch (``store.etcd.watch``) stays on a
member that answers: a member gone silent under it is left within about half a second, the
stream opened on another from the revision after its last event, and the silent member
written down where the daemon's own requests and this root's commands read it. A watch
whose start revision was compacted starts again from the cluster's revision now, and one no
member answers is opened again with back-off (0.2 s doubling to 5 s); either way ``moved``
is set, so the daemon reads what it may have missed — events are keys, never compacted
themselves, so reading them from the last id it saw is the full resync. The thread has its
own gateway (a gateway's connections belong to one thread) and dies with the process.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING

from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.watch import LiveWatch

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore

BACKOFF_S, BACKOFF_MAX_S = 0.2, 5.0


class StoreWatch:
    """Follows ``store``'s event keys; ``moved`` is set whenever there may be new events."""

    def __init__(self, store: EtcdStore, start: int = 0) -> None:
        """``start``: the revision to watch from (0: the cluster's revision now)."""
        self.moved = threading.Event()
        self.moved.set()  # the first tick reads
        self.compactions = 0  # starts over a compacted revision (the tests read it)
        self._prefix = store.prefix + b"ev/"
        # The thread's own gateway (a gateway's connections belong to one thread), with the
        # daemon's memory of silent members: what the watch finds, the daemon's requests
        # and this root's commands use.
        self._gateway = store.gateway.alike()
        self.watch = LiveWatch(self._gateway, self._prefix, etcdgw.prefix_end(self._prefix))
        if not start:
            # The revision now, asked before the thread starts: a change made after the watch
            # was made is never missed, however long the thread's first connection takes (a
            # TLS handshake and a login). Not answered: the thread asks, once it can.
            with contextlib.suppress(etcdgw.Unavailable, etcdgw.EtcdError):
                start = store.gateway.range(self._prefix, keys_only=True)[0] + 1
        self._thread = threading.Thread(
            target=self._run, args=(start,), name="memkeeper-store-watch"
        )
        self._thread.daemon = True
        self._thread.start()

    def _run(self, start: int) -> None:
        gateway = self._gateway
        pause = BACKOFF_S
        while True:
            try:
                if not start:
                    start = gateway.range(self._prefix, keys_only=True, limit=1)[0] + 1
                for _revision, _events in self.watch.follow(start):
                    pause = BACKOFF_S
                    self.moved.set()
            except etcdgw.EtcdError as exc:
                if exc.code != 11:
                    time.sleep(pause)
                    pause = min(pause * 2, BACKOFF_MAX_S)
                else:
                    self.compactions += 1
                start = 0  # from the cluster's revision now: the daemon reads the rest
                self.moved.set()
                continue
            except Exception:  # no member answers, a member gone…: whatever breaks the
                time.sleep(pause)  # watch, it is opened again (the thread must outlive
                pause = min(pause * 2, BACKOFF_MAX_S)  # every failure)
            start = self.watch.start or start  # on from the last revision it delivered
            self.moved.set()  # the watch broke: whatever it missed is read next
