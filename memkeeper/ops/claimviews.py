"""What the claim table shows, for the read-only commands (``claims``, ``metrics``, the
status views): a root without a store has an empty table, and gets no store."""

from __future__ import annotations

from memkeeper.ops.claims import METRICS_WINDOW_S, ClaimTable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow
    from memkeeper.ops.workspace import Workspace


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
    return ClaimTable(ws).metrics()
