"""Which requests ahead in a queue stop one: ``Ahead``, grouping them by what they ask. Pure.

A request is at the front of a claim queue when no request ahead of it ``conflicts`` with it
(``decisions``): checked one by one, a queue of n requests costs n² checks at every look and
at every change (32 agents queued for one path: ~500 checks a transaction). Requests that ask
the same (mode, targets) differ only by their agent, so the check is one per such group.
"""

from __future__ import annotations

from memkeeper.claims.targets import any_overlap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Ask(Protocol):
        """A claim or a request (``decisions.Ask``), as far as a conflict goes."""

        @property
        def agent(self) -> str: ...
        @property
        def mode(self) -> str: ...
        @property
        def targets(self) -> tuple[str, ...]: ...


class Ahead:
    """The requests ahead of a place in a queue's order, grouped by what they ask (mode and
    targets) with the agents asking it: whether any of them ``conflicts`` with a request
    costs a look per group, not one per request — a queue for one path is one group, however
    long."""

    __slots__ = ("_groups",)

    def __init__(self) -> None:
        self._groups: dict[tuple[str, tuple[str, ...]], set[str]] = {}

    def add(self, ask: Ask) -> None:
        self._groups.setdefault((ask.mode, ask.targets), set()).add(ask.agent)

    def blocks(self, ask: Ask) -> bool:
        """Whether any request added ``conflicts`` with ``ask``."""
        for (mode, targets), agents in self._groups.items():
            if (mode == "read" and ask.mode == "read") or agents == {ask.agent}:
                continue
            if any_overlap(targets, ask.targets):
                return True
        return False
