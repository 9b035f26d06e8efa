"""Who a message wakes (docs/reference.md §4.28, ``inbox --wait``): the name of a waiting
inbox's FIFO, and which FIFOs a message to a recipient pokes. Pure.

A waiter's FIFO is ``mail-<tag>-<pid>-<n>`` under the home's wait directory, ``tag`` being a
digest of the identity it waits as (identities hold ``:`` and ``/``; a file name must not).
A message to an identity pokes that identity's FIFOs; one to ``all`` pokes every waiter's
(its sender's too: it looks, finds nothing for itself, and waits on).
"""

from __future__ import annotations

import hashlib

from memkeeper.mail.messages import ALL

PREFIX = "mail-"
SUFFIX = ".fifo"
# A waiter looks at its inbox at least this often, in case a poke was lost (a message posted
# inside another operation's transaction, a sender on another machine): with SQLite …
WAKE_CAP_S = 5.0
# … and with etcd, whose watch is the wake-up (the cap covers a watch being re-opened).
SHARED_CAP_S = 1.0


def tag(identity: str) -> str:
    """The part of a FIFO's name that names ``identity``."""
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def waiter_id(identity: str, pid: int, n: int) -> str:
    """The id (FIFO name without its suffix) of waiter ``n`` of process ``pid``."""
    return f"{PREFIX}{tag(identity)}-{pid}-{n}"


def pid_of(waiter: str) -> int:
    """The process of a waiter id (``waiter_id``'s ``pid``)."""
    return int(waiter.rsplit("-", 2)[1])


def woken(to: str, names: list[str]) -> list[str]:
    """Of the wait directory's file ``names``, the waiter ids a message to ``to`` pokes."""
    start = PREFIX if to == ALL else f"{PREFIX}{tag(to)}-"
    return [n.removesuffix(SUFFIX) for n in names if n.startswith(start) and n.endswith(SUFFIX)]


def next_look(left: float, *, shared: bool) -> float:
    """How long a waiter blocks before it looks again: ``left`` of its wait, capped."""
    return max(0.0, min(left, SHARED_CAP_S if shared else WAKE_CAP_S))
