"""``StoreRetry``: a shared store's request to run a whole operation again (its own module so
that the SQLite path can catch it without importing the etcd client)."""

from __future__ import annotations


class StoreRetry(Exception):
    """What a ``writing()`` block read was changed by another writer before the block
    committed; nothing of the block was applied: run the whole operation again.

    Not an ``EnvironmentFailure`` (nor any ``MemkeeperError``): it is no failure to report but
    a request to start over, to be caught by the retry loop around the operation
    (``Workspace.again``); one that escaped it would show up as a bug, not as a misleading
    "environment" error."""
