"""Who an operation wakes once it has committed (docs/reference.md §4.28, §4.33): the one
sure trigger is the event log, since every change that a waiter waits for leaves an event
in the transaction that makes it — a message posted anywhere (``message.sent``: a ``send``,
an overlap notice inside a claim's transaction, a meeting's message, a takeover's
``handoff``) wakes its recipient's ``inbox --wait``; a claim ended by any verb or by its TTL
(``claim.released``, ``completed``, ``abandoned``, ``expired``) wakes ``work next --wait``
and ``work wait``, whose paths it may have been holding.

``Workspace.record`` notes what each event wakes (``woken``); ``Workspace.again``, around a
whole operation, pokes them (``wake``) after it returns — after its commits — so a waiter
never wakes to a transaction not yet visible. A poke for an attempt a shared store undid
costs a waiter one look, never a message. Imported only by a command that writes.
"""

from __future__ import annotations

import os

from memkeeper.names import WAIT_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:  # nothing more at start-up: a read never pokes
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any


WORK = ""  # the key of the work waiters' wake-up: they wait on any item, not on one
CLAIM_ENDS = ("claim.released", "claim.completed", "claim.abandoned", "claim.expired")


def woken(type: str, data: Mapping[str, Any]) -> set[tuple[str, str]]:
    """What an event of ``type`` with ``data`` wakes: ``("mail", recipient)``, ``("work",
    WORK)``, or nothing. Pure."""
    if type == "message.sent" and isinstance(data.get("to"), str):
        return {("mail", data["to"])}
    if type in CLAIM_ENDS:
        return {("work", WORK)}
    return set()


def wake(home: str, shared: bool, noted: Iterable[tuple[str, str]]) -> None:
    """Poke what an operation's events woke (``woken``), once it has committed."""
    for kind, who in sorted(noted):
        if kind == "mail":
            poke_mail(home, shared, who)
        else:
            poke_work(home)


def poke_mail(home: str, shared: bool, to: str) -> None:
    """Wake the local waiters a message to ``to`` is for (``mail.waits``; with a shared store
    their watch has seen it)."""
    from memkeeper.mail import waits

    if not shared:
        _notify(home, lambda names: waits.woken(to, names))


def poke_work(home: str) -> None:
    """Wake everyone waiting on work (``next --wait``, ``wait``): a byte into each FIFO."""
    _notify(home, lambda names: [n[: -len(".fifo")] for n in names if n.startswith("work-")])


def _notify(home: str, which: Callable[[list[str]], list[str]]) -> None:
    from memkeeper.fs import wakeups

    try:
        names = os.listdir(os.path.join(home, WAIT_DIR))
    except OSError:
        return  # no waiter has ever waited here
    wakeups.notify(home, which(names))
