"""Who an operation wakes once it has committed (docs/reference.md §4.28, §4.33): the one
sure trigger is the event log, since every change that a waiter waits for leaves an event
in the transaction that makes it — a message posted anywhere (``message.sent``: a ``send``,
an overlap notice inside a claim's transaction, a meeting's message, a takeover's
``handoff``) wakes its recipient's ``inbox --wait``; a claim ended by any verb or by its TTL
(``claim.released``, ``completed``, ``abandoned``, ``expired``) wakes ``work next --wait``
and ``work wait``, whose paths it may have been holding.

``Workspace.record`` notes what each event wakes (``woken``); ``Workspace.again``, around a
whole operation, pokes them after it returns — after its commits — so a waiter never wakes
to a transaction not yet visible. A poke for an attempt a shared store undid costs a waiter
one look, never a message.
"""

from __future__ import annotations

from typing import cast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from memkeeper.ops.workspace import Workspace

WORK = ""  # the key of the work waiters' wake-up: they wait on any item, not on one
CLAIM_ENDS = ("claim.released", "claim.completed", "claim.abandoned", "claim.expired")


def woken(type: str, data: Mapping[str, Any]) -> tuple[str, str] | None:
    """What an event of ``type`` with ``data`` wakes: ``("mail", recipient)``, ``("work",
    WORK)`` or nothing. Pure."""
    if type == "message.sent" and isinstance(data.get("to"), str):
        return ("mail", data["to"])
    if type in CLAIM_ENDS:
        return ("work", WORK)
    return None


class Wakes:
    """The part of a ``Workspace`` that keeps the wake-ups of the operation under way."""

    def __init__(self) -> None:
        self._wakes: set[tuple[str, str]] = set()
        self._depth = 0  # nested ``again``: only the outermost one has committed everything
        super().__init__()

    def note_wake(self, type: str, data: Mapping[str, Any]) -> None:
        found = woken(type, data)
        if found is not None:
            self._wakes.add(found)

    def wake_noted(self) -> None:
        """Poke what the operation's events woke (the outermost ``again`` only)."""
        if self._depth or not self._wakes:
            return
        noted, self._wakes = self._wakes, set()
        wake(cast("Workspace", self), noted)


def wake(ws: Workspace, noted: Iterable[tuple[str, str]]) -> None:
    from memkeeper.ops.mailwait import poke
    from memkeeper.ops.work import poke_watchers

    for kind, who in sorted(noted):
        if kind == "mail":
            poke(ws, who)
        else:
            poke_watchers(ws.home)
