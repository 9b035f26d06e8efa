"""``StoreUnavailable``: a shared store none of whose members answers.

An ``EnvironmentFailure`` with ``reason="store_unavailable"`` (exit 1, the same JSON as
before it had a class of its own), so that whoever can carry on without the store — ``read``
answering from the file, the hooks deciding without the claims, the daemon waiting for the
store to come back — catches it by its class. Its own module, so that they can without
importing the etcd client. (``StoreRetry``, a request to run again rather than an error, is
``store.retry``'s.)

``StoreRefused``: members that answered but refused memkeeper — its TLS certificate, its user
or password, its user's rights on the prefix. To whoever carries on without the store it is
the same as no member answering (a ``StoreUnavailable``), but with a reason of its own,
``store_refused``, and a message naming the setting to fix.
"""

from __future__ import annotations

from memkeeper.errors import EnvironmentFailure


class StoreUnavailable(EnvironmentFailure):
    """No member of the shared store's cluster answered: nothing was changed."""

    reason = "store_unavailable"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message, **{"reason": fields.pop("reason", self.reason), **fields})


class StoreRefused(StoreUnavailable):
    """The shared store's members refused memkeeper for who it is: nothing was changed."""

    reason = "store_refused"
