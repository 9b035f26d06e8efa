"""Waiting for mail without polling (docs/reference.md §4.28, ``inbox --wait S``): look at
this identity's inbox; when nothing waits in it, block on a wake-up until a message comes or
the time is up. With the local store the wake-up is a FIFO of the waiter's own
(``fs.wakeups``) that ``ops.mail.send`` pokes after its commit (``poke``); with etcd, a watch
on the recipients' index (``store.etcd.mailwatch``), which a message from any machine moves.
Either way the waiter looks again at least at ``mail.waits``' cap, so a lost poke costs
latency, never a message. Below ``ops.mail``: it reads the store itself.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time

from memkeeper.mail import waits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    from memkeeper.coordination import Message
    from memkeeper.ops.claimwaits import Cancel
    from memkeeper.ops.workspace import Workspace

    class Wakeup(Protocol):
        def block(self, timeout: float) -> bool: ...

        def close(self) -> None: ...


CANCEL_POLL_S = 0.05  # a cancellable wait looks at its flag this often (as a claim's does)
_waiters = itertools.count(1)  # waiters of this process: each its own FIFO


def wait(
    ws: Workspace,
    timeout: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    cancel: Cancel | None = None,
) -> list[Message]:
    """The messages waiting for this identity (not acknowledged), oldest first; when there are
    none, those that come within ``timeout`` seconds (``[]``: none came, or ``cancel`` was
    set — looked at every ``CANCEL_POLL_S``)."""
    found = _inbox(ws)
    if found or timeout <= 0:
        return found
    deadline = clock() + timeout
    wakeup = _wakeup(ws)  # armed before the next look: a message after it wakes us
    try:
        while not (found := _inbox(ws)):
            left = deadline - clock()
            if left <= 0 or (cancel is not None and cancel.is_set()):
                break
            look = waits.next_look(left, shared=ws.shared)
            wakeup.block(look if cancel is None else min(look, CANCEL_POLL_S))
    finally:
        wakeup.close()
    return found


def _inbox(ws: Workspace) -> list[Message]:
    return ws.store.mail.messages_for(ws.agent) if ws.has_store else []


def poke(ws: Workspace, to: str) -> None:
    """Wake the local waiters a message to ``to`` is for (after the commit that posted it)."""
    from memkeeper.ops.wakes import poke_mail

    poke_mail(ws.home, ws.shared, to)


def _wakeup(ws: Workspace) -> Wakeup:
    if ws.shared:
        from memkeeper.store.etcd import EtcdStore
        from memkeeper.store.etcd.mailwatch import MailWatch

        store = ws.store
        assert isinstance(store, EtcdStore)
        return MailWatch(store)
    from memkeeper.fs import processes, wakeups
    from memkeeper.names import WAIT_DIR

    with contextlib.suppress(OSError):  # FIFOs of this identity's waiters killed meanwhile
        for left in waits.woken(ws.agent, os.listdir(os.path.join(ws.home, WAIT_DIR))):
            if not processes.pid_alive(waits.pid_of(left)):
                wakeups.discard(ws.home, left)
    return wakeups.Inbox(ws.home, waits.waiter_id(ws.agent, os.getpid(), next(_waiters)))
