"""What the CLI's listings and the dashboard show: the read side, assembled once for both.

``status`` (root, policy, managed files, open reconciliations, live claims), ``queue`` (live
claims and the waiters, each with its place in line and whom it waits on), ``files`` (every
managed file with its sections and who changed each last, and when), ``history`` (one
section's text and its events), ``reconciliations`` (the open ones with their diffs) and
``contention`` (who waited on whom, for how long, how it ended). Read-only: none of them
creates a store where there is none, and none returns a private file's text.
"""

from __future__ import annotations

from memkeeper.errors import Refused
from memkeeper.events import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event

HISTORY_LIMIT = 50  # events of one section that ``history`` returns, newest first
CONTENTION_TYPES = ("claim.queued", "claim.granted", "claim.aborted")


def status(ws: Workspace) -> dict[str, Any]:
    """As ``memkeeper status --json`` (without ``status``)."""
    from memkeeper.ops.setup import status as describe

    payload = describe(ws)
    payload["reconciliations"] = [
        {k: v for k, v in r.to_json().items() if k not in ("human", "generated")}
        for r in _open_reconciliations(ws)
    ]
    payload["claims"] = queue(ws)["claims"]
    return payload


def queue(ws: Workspace) -> dict[str, Any]:
    """The live claims and the requests waiting for one, in the order they will be served:
    each waiter's ``position`` (1: next) and ``blocked_by`` (the live claims in its way)."""
    from memkeeper.leases import decisions as leases
    from memkeeper.leases.wording import claim_json, waiter_json
    from memkeeper.ops.claims import live

    claims, waiters, now = live(ws)
    held = tuple(claims)
    queued = tuple(w.request for w in waiters if w.state == "waiting")
    order = {r.id: n for n, r in enumerate(leases.queue_order(held, queued), 1)}
    rows = []
    for waiter in waiters:
        blocking = leases.blockers(held, waiter.request)
        rows.append(
            {
                **waiter_json(waiter, now),
                "position": order.get(waiter.request.id),
                "blocked_by": [{"id": c.id, "agent": c.agent} for c in blocking],
            }
        )
    return {"now": iso_utc(now), "claims": [claim_json(c, now) for c in claims], "waiters": rows}


def files(ws: Workspace) -> list[dict[str, Any]]:
    """Every managed file with its class and its sections, each with ``last``: the event
    that changed it last (``actor``, ``ts``, ``type``; None before any). Private files come
    without sections: memkeeper never indexes them."""
    from memkeeper.ops.read import sections
    from memkeeper.ops.setup import status as describe

    out = []
    for found in describe(ws)["files"]:
        entry: dict[str, Any] = {"path": found["path"], "class": found["class"], "sections": []}
        if found["class"] != "private":
            last = ws.store.last_events(found["path"]) if ws.has_store else {}
            entry["last"] = _who(last.get(None))
            entry["sections"] = [
                {**s.to_json(), "last": _who(last.get(s.key))} for s in sections(ws, found["path"])
            ]
        out.append(entry)
    return out


def history(ws: Workspace, ref: str, limit: int = HISTORY_LIMIT) -> dict[str, Any]:
    """A section (``PATH#KEY``) as ``read`` gives it, with ``history``: its events, newest
    first. ``Refused`` (reason ``class``) for a private file, whose text is never shown."""
    from memkeeper.markdown.refs import split_ref
    from memkeeper.ops.read import read

    path, _ = split_ref(ref)
    rel = ws.relpath(path)
    if ws.rule(rel).file_class == "private":
        raise Refused(
            f"{rel} is private: its text is its agent's own and is not shown", reason="class"
        )
    found = read(ws, ref)
    events = ws.store.events_of(rel, found.key, limit) if ws.has_store else []
    return {**found.to_json(), "history": [e.to_json() for e in events]}


def reconciliations(ws: Workspace) -> list[dict[str, Any]]:
    """The open reconciliations, each with its diff (generated → human)."""
    from memkeeper.ops.reconcile import diff

    return [{**r.to_json(), "diff": diff(r)} for r in _open_reconciliations(ws)]


def contention(ws: Workspace, window_s: float | None = None) -> list[dict[str, Any]]:
    """Each wait for a claim in the metrics window (default ``metrics``'), newest first:
    who (``agent``, ``id``, ``targets``) waited on whom (``waited_on``), for how long
    (``waited_s``) and how it ended (``outcome``: ``granted``, ``deadlock``, ``timeout``,
    ``abandoned``, ``interrupted``, or ``waiting`` while it lasts)."""
    from memkeeper.events import parse_utc
    from memkeeper.ops.claims import METRICS_WINDOW_S

    if not ws.has_store:
        return []
    now = ws.now()
    since = iso_utc(now - (METRICS_WINDOW_S if window_s is None else window_s))
    waits: dict[str, dict[str, Any]] = {}
    started: dict[str, float] = {}
    for event in ws.store.events_typed(CONTENTION_TYPES, since):
        request = str(event.data.get("id"))
        if event.type == "claim.queued":
            started[request] = parse_utc(event.ts)
            waits[request] = {
                "id": request,
                "agent": event.actor,
                "targets": event.data.get("targets", []),
                "waited_on": event.data.get("waiting_on", []),
                "ts": event.ts,
                "outcome": "waiting",
                "waited_s": None,
            }
        elif request in waits and waits[request]["outcome"] == "waiting":
            outcome = "granted" if event.type == "claim.granted" else event.data.get("reason")
            waits[request]["outcome"] = outcome or "aborted"
            waits[request]["waited_s"] = round(parse_utc(event.ts) - started[request], 3)
    for request, wait in waits.items():
        if wait["outcome"] == "waiting":
            wait["waited_s"] = round(max(0.0, now - started[request]), 3)
    return sorted(waits.values(), key=lambda w: str(w["ts"]), reverse=True)


def _open_reconciliations(ws: Workspace) -> list[Any]:
    return ws.store.reconciliations() if ws.has_store else []


def _who(event: Event | None) -> dict[str, Any] | None:
    return None if event is None else {"actor": event.actor, "ts": event.ts, "type": event.type}
