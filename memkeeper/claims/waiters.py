"""A queued claim request as the claim table keeps it: a record, cheap to import (the store
loads it on every command)."""

from __future__ import annotations

from memkeeper.records import Record

_set = object.__setattr__  # (a record's own refuses: immutable)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.claims.decisions import Request

# A wait this far past its deadline is dropped, whatever its process seems to be (the local
# store judges it by its clock; etcd by a lease that ends then, by its own).
ABANDON_GRACE_S = 10.0


class WaiterRow(Record):
    """A queued claim request, the process waiting on it and what became of it."""

    __slots__ = ("request", "pid", "deadline", "state", "reason")
    request: Request
    pid: int
    deadline: float
    state: str  # waiting, granted or aborted
    reason: str | None

    def __init__(
        self, request: Request, pid: int, deadline: float, state: str, reason: str | None
    ) -> None:
        # Field by field, not ``_fill``'s loop: every claim operation builds the whole queue.
        _set(self, "request", request)
        _set(self, "pid", pid)
        _set(self, "deadline", deadline)
        _set(self, "state", state)
        _set(self, "reason", reason)
