"""The watchdog's writes and the idle marks every view shows (docs/reference.md §4.18): a
claim marked idle (``claim.idle``, its holder told), marked active again (``claim.active``),
or released for being idle too long (``claim.released`` with reason ``idle``, its holder
told). The rule is ``claims.idle``; the daemon (``daemon.watchdog``) gathers the facts.

The mark is the log's: a live claim is idle while its latest ``claim.idle`` or
``claim.active`` is a ``claim.idle``.
"""

from __future__ import annotations

from memkeeper.claims import idle
from memkeeper.claims.wording import claim_data
from memkeeper.events import iso_utc, parse_utc
from memkeeper.ops.posting import post

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event

WATCHDOG = "memkeeper"  # who marks claims and tells their holders
MARKS = ("claim.idle", "claim.active")
MARGIN_S = 86400.0  # events' times are the wall clock's, grants the claims' clock's


def idle_marks(ws: Workspace, claims: Iterable[Claim]) -> dict[str, Event]:
    """The ``claim.idle`` event of each of ``claims`` that is marked idle now."""
    return _marks(ws, {c.id: c.granted_at for c in claims})


def mark_json(event: Event | None) -> dict[str, Any] | None:
    """What a view shows of a claim's idle mark (``None``: not idle): since when, how long it
    had not moved then, and the ``claim.idle`` event."""
    if event is None:
        return None
    return {"since": event.ts, "idle_s": event.data.get("idle_s"), "event": event.id}


def with_marks(
    ws: Workspace, claims: Sequence[Claim], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``rows`` (one per claim, in order) with each claim's ``idle`` mark."""
    marks = idle_marks(ws, claims)
    return [
        {**row, "idle": mark_json(marks.get(c.id))} for c, row in zip(claims, rows, strict=True)
    ]


def record_json(ws: Workspace, record: ClaimRecord) -> dict[str, Any]:
    """A claim's record (``claim show``) with its ``idle`` mark (null unless it is active)."""
    found = None
    if record.state == "active":
        found = _marks(ws, {record.id: parse_utc(record.granted_at)}).get(record.id)
    return {**record.to_json(), "idle": mark_json(found)}


def _marks(ws: Workspace, wanted: dict[str, float]) -> dict[str, Event]:
    if not wanted or not ws.has_store:
        return {}
    since = iso_utc(max(0.0, min(wanted.values()) - MARGIN_S))
    latest: dict[str, Event] = {}
    for event in ws.store.events_typed(MARKS, since):
        claim_id = str(event.data.get("id"))
        if claim_id in wanted:
            latest[claim_id] = event
    return {k: e for k, e in latest.items() if e.type == "claim.idle"}


def mark_idle(ws: Workspace, claim: Claim, quiet_s: float, moved_at: float) -> Event | None:
    """``claim.idle`` and a message to its holder, in one transaction; ``None`` when it is
    marked already (another root's watchdog, on a shared store, was first)."""

    def once() -> Event | None:
        with ws.store.writing():
            if claim.id in idle_marks(ws, [claim]):
                return None
            text = idle.idle_text(claim.id, claim.targets, quiet_s)
            post(ws, WATCHDOG, claim.agent, "idle", claim.id, text)
            data = {**claim_data(claim), "idle_s": round(quiet_s, 3), "moved_at": iso_utc(moved_at)}
            return ws.record("claim.idle", None, None, data, WATCHDOG)

    event: Event | None = ws.again(once)
    return event


def mark_active(ws: Workspace, claim: Claim, idle_s: float) -> Event | None:
    """``claim.active``: an idle claim moved again (``None``: it is not marked idle)."""

    def once() -> Event | None:
        with ws.store.writing():
            if claim.id not in idle_marks(ws, [claim]):
                return None
            data = {**claim_data(claim), "idle_s": round(idle_s, 3)}
            return ws.record("claim.active", None, None, data, WATCHDOG)

    event: Event | None = ws.again(once)
    return event


def release_idle(ws: Workspace, claim_id: str, idle_s: float) -> Claim | None:
    """Release an idle claim for its holder (reason ``idle``) and tell it; ``None`` when the
    claim is no longer live (released, expired, completed meanwhile)."""
    from memkeeper.ops.claims import ClaimTable

    table = ClaimTable(ws)

    def once() -> Claim | None:
        with table.transaction(durable=False) as now:
            claim = table._held(claim_id)
            if claim is None or not claim.is_live(now):
                return None
            table._drop(claim, now, "idle")
            text = idle.released_text(claim.id, claim.targets, idle_s)
            post(ws, WATCHDOG, claim.agent, "idle", claim.id, text)
            return claim

    released: Claim | None = ws.again(once)
    return released
