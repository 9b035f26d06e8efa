"""What the claim table shows, for the read-only commands (``claims``, ``metrics``, the
status views): a root without a store has an empty table, and gets no store."""

from __future__ import annotations

from memkeeper.events import iso_utc
from memkeeper.ops.claims import ClaimTable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.ops.workspace import Workspace

METRICS_WINDOW_S = 3600.0


def live(ws: Workspace) -> tuple[list[Claim], list[WaiterRow], float]:
    """The live claims and queued requests (``ClaimTable.live``); none, and no store
    created, where there is no store."""
    if not ws.has_store:
        return [], [], ws.now()
    return ClaimTable(ws).live()


def metrics(ws: Workspace) -> dict[str, Any]:
    """``ClaimTable.metrics``; all zero, and no store created, where there is no store."""
    if not ws.has_store:
        names = ("claims_held", "queue_depth", "claims_granted", "deadlocks_broken")
        zeros = dict.fromkeys((*names, "ttl_expirations", "conflicts"), 0)
        return {"window_s": int(METRICS_WINDOW_S), **zeros}
    table = ClaimTable(ws)
    return ws.again(lambda: _metrics(table))


def _metrics(table: ClaimTable) -> dict[str, Any]:
    with table.transaction():
        wall = table.ws.now()  # events and tallies are dated by the wall clock
        since, count = iso_utc(wall - METRICS_WINDOW_S), table.store.count_events
        return {
            "window_s": int(METRICS_WINDOW_S),
            "claims_held": len(table.held),
            "queue_depth": sum(1 for w in table.rows if w.state == "waiting"),
            "claims_granted": count("claim.granted", since),
            "deadlocks_broken": count("claim.aborted", since, "deadlock"),
            "ttl_expirations": count("claim.expired", since),
            "conflicts": table.store.tally_count("conflict", wall - METRICS_WINDOW_S),
        }
