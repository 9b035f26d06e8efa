"""What the CLI's listings and the dashboard show: the read side, assembled once for both.

``status`` (root, policy, managed files, open reconciliations, live claims), ``queue`` (live
claims and the waiters, each with its place in line and whom it waits on), ``files`` (every
managed file with its sections and who changed each last, and when; ``file``: one of them),
``history`` (one section's text and its events), ``reconciliations`` (the open ones with their
diffs) and ``contention`` (who waited on whom, for how long, how it ended). Read-only: none of
them creates a store where there is none, and none returns a private file's text.

The dashboard asks for these every few seconds, so the parsed policy is kept, keyed by the
policy file's bytes (``_policy``). The walk for managed files is not kept: nothing cheap
tells when a file appears or goes, and a stale list of files would be wrong.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from memkeeper import names
from memkeeper.errors import Refused
from memkeeper.events import iso_utc
from memkeeper.fs.walk import managed_files
from memkeeper.names import POLICY_FILE, temp_pid
from memkeeper.policy.loader import parse_policy, policy_bytes

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from memkeeper.coordination import Reconciliation
    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import Policy
    from memkeeper.records import Event

HISTORY_LIMIT = 50  # events of one section that ``history`` returns, newest first
CONTENTION_TYPES = ("claim.queued", "claim.granted", "claim.aborted")


def status(ws: Workspace, *, full: bool = False) -> dict[str, Any]:
    """As ``memkeeper status --json`` (without ``status``): the root, the policy, the store,
    the files (each described as ``init`` describes it, from the kept policy, reading only
    those whose stat stamp moved — every one with ``full``), the open reconciliations and the
    live claims."""
    data, policy = _policy(ws)
    return {
        "root": str(ws.root),
        "policy": None if data is None else POLICY_FILE,
        "store": store_view(ws),
        "files": described(ws, policy, full=full),
        "reconciliations": [
            {k: v for k, v in r.to_json().items() if k not in ("human", "generated")}
            for r in list_reconciliations(ws)
        ],
        "claims": waiters(ws)["claims"],
    }


def described(ws: Workspace, policy: Policy, *, full: bool = False) -> list[dict[str, Any]]:
    """Managed files as ``setup.describe`` gives them: a file that holds what the index holds
    — by its stat stamp, else read — is counted from the index; the others are indexed first,
    in batches (``bulkindex``)."""
    from memkeeper.ops.bulkindex import index_files
    from memkeeper.ops.stamping import Stamping

    seen = Stamping(ws, full=full)
    found = managed_files(policy, ws.top)
    stored = [rel for rel, rule in found if rule.file_class != "private"]
    same = seen.unchanged_among(stored) if seen.stored else {}
    indexed = {rel for rel in stored if rel in same or seen.holds(rel)}
    counts = ws.store.section_counts(indexed) if indexed else {}
    rest = [rel for rel in stored if rel not in indexed]
    others = index_files(ws, rest) if rest else {}
    out: list[dict[str, Any]] = []
    for rel, rule in found:
        entry: dict[str, Any] = {"path": rel, "class": rule.file_class}
        if rel in indexed:
            entry["sections"] = counts.get(rel, 0)
        elif rel in others:  # its section count, or what is wrong with it (not text)
            entry["sections" if isinstance(others[rel], int) else "error"] = others[rel]
        out.append(entry)
    seen.save()
    return out


def store_view(ws: Workspace) -> dict[str, Any]:
    """The store in use (reference §12): ``{"kind": "sqlite", "path": …}``, or ``{"kind": "etcd",
    "path": URL, "endpoints": [HOST:PORT…], "prefix": "/P/"}`` — either prints as
    ``KIND (PATH)``."""
    url = ws.store_url()
    if url is None:
        return {"kind": "sqlite", "path": f"{names.HOME_DIR}/{names.STATE_DB}"}
    endpoints = url.endpoints_text().split(",")
    return {"kind": "etcd", "path": url.text, "endpoints": endpoints, "prefix": url.prefix}


def waiters(ws: Workspace) -> dict[str, Any]:
    """The live claims and the requests waiting for one, in the order they will be served:
    each waiter's ``position`` (1: next) and ``blocked_by`` (the live claims in its way)."""
    from memkeeper.claims import decisions as rules
    from memkeeper.claims.wording import claim_json, waiter_json
    from memkeeper.ops.claimviews import live

    claims, waiters, now = live(ws)
    held = tuple(claims)
    queued = tuple(w.request for w in waiters if w.state == "waiting")
    order = {r.id: n for n, r in enumerate(rules.queue_order(held, queued), 1)}
    rows = []
    for waiter in waiters:
        blocking = rules.blockers(held, waiter.request)
        rows.append(
            {
                **waiter_json(waiter, now),
                "position": order.get(waiter.request.id),
                "blocked_by": [{"id": c.id, "agent": c.agent} for c in blocking],
            }
        )
    from memkeeper.ops.idleclaims import with_marks

    shown = with_marks(ws, claims, [claim_json(c, now) for c in claims])
    return {"now": iso_utc(now), "claims": shown, "waiters": rows}


def files(ws: Workspace) -> list[dict[str, Any]]:
    """Every managed file with its class and its sections, each with ``last``: the event
    that changed it last (``actor``, ``ts``, ``type``; None before any). Private files come
    without sections: memkeeper never indexes them."""
    _, policy = _policy(ws)
    return [_entry(ws, rel, rule.file_class) for rel, rule in managed_files(policy, ws.top)]


def file(ws: Workspace, rel: str) -> dict[str, Any] | None:
    """The root-relative ``rel`` as ``files`` lists it — None when ``files`` would not list
    it — reading only that file: what one file's page needs."""
    _, policy = _policy(ws)
    rule = policy.classify(rel) if _walk_reaches(policy, ws.top, rel) else None
    return None if rule is None else _entry(ws, rel, rule.file_class)


def history(ws: Workspace, ref: str, limit: int = HISTORY_LIMIT) -> dict[str, Any]:
    """A section (``PATH#KEY``) as ``read`` gives it, with ``history``: its events, newest
    first, and ``compacted``: the id up to which the log was compacted (0: never), the events
    before it gone. ``Refused`` (reason ``class``) for a private file, whose text is never shown."""
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
    # The events up to a compaction are gone (reference §8 "Compaction"): said, not hidden.
    compacted = 0
    if ws.has_store:
        from memkeeper.ops.compact import compacted_through

        compacted = compacted_through(ws)
    history = [e.to_json() for e in events]
    return {**found.to_json(), "history": history, "compacted": compacted}


def select_events(
    events: Iterable[Event],
    *,
    path: str | None = None,
    type: str | None = None,
    actor: str | None = None,
) -> list[Event]:
    """The events about ``path``, of ``type`` (``claim.*``: every ``claim.`` type), by
    ``actor`` — each filter only when given."""
    prefix = type[:-1] if type is not None and type.endswith("*") else None
    return [
        e
        for e in events
        if (path is None or e.path == path)
        and (type is None or e.type == type or (prefix is not None and e.type.startswith(prefix)))
        and (actor is None or e.actor == actor)
    ]


def reconciliations(ws: Workspace) -> list[dict[str, Any]]:
    """The open reconciliations, each with its diff (generated → human)."""
    from memkeeper.ops.reconcile import diff

    return [{**r.to_json(), "diff": diff(r)} for r in list_reconciliations(ws)]


def list_reconciliations(ws: Workspace, *, resolved: bool = False) -> list[Reconciliation]:
    """The open reconciliations by id (all of them with ``resolved``); none where there is
    no store yet (none is created to say so)."""
    return ws.store.reconciliations.reconciliations(resolved=resolved) if ws.has_store else []


def contention(ws: Workspace, window_s: float | None = None) -> list[dict[str, Any]]:
    """Each wait for a claim in the metrics window (default ``metrics``'), newest first:
    who (``agent``, ``id``, ``targets``) waited on whom (``waited_on``), for how long
    (``waited_s``) and how it ended (``outcome``: ``granted``, ``deadlock``, ``timeout``,
    ``abandoned``, ``interrupted``, or ``waiting`` while it lasts)."""
    from memkeeper.events import parse_utc
    from memkeeper.ops.claimviews import METRICS_WINDOW_S

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


def _entry(ws: Workspace, rel: str, file_class: str) -> dict[str, Any]:
    """A managed file as ``files`` lists it. Its sections are read (and the file indexed, if
    it changed) before its last events, so an edit noticed now is among them."""
    from memkeeper.ops.read import sections

    entry: dict[str, Any] = {"path": rel, "class": file_class, "sections": []}
    if file_class == "private":
        return entry
    found = sections(ws, rel)
    last = ws.store.last_events(rel) if ws.has_store else {}
    entry["last"] = _who(last.get(None))
    entry["sections"] = [{**s.to_json(), "last": _who(last.get(s.key))} for s in found]
    return entry


def _walk_reaches(policy: Policy, top: str, rel: str) -> bool:
    """Whether the walk of ``managed_files`` (``fs.walk``) finds ``rel``, by its own rule:
    down directories it enters (``walks_into``: no ``.venv``, ``node_modules`` …), never
    through a symlink, to a regular file that is no killed writer's temp — each step named
    exactly as its directory lists it (on a case-insensitive disk ``claude.md`` opens
    ``CLAUDE.md``, which the walk lists as ``CLAUDE.md`` only). Looks at one directory per
    level, not at the whole tree."""
    *dirs, name = rel.split("/")
    if not all(policy.walks_into(d) for d in dirs) or temp_pid(name) is not None:
        return False
    here = top
    for part in dirs:
        step = _listed(here, part)
        if step is None or not step.is_dir(follow_symlinks=False):
            return False
        here = step.path
    found = _listed(here, name)
    return found is not None and found.is_file(follow_symlinks=False)


def _listed(directory: str, name: str) -> os.DirEntry[str] | None:
    """The entry ``directory`` lists as ``name`` (None: none, or it cannot be listed)."""
    try:
        with os.scandir(directory) as scan:
            return next((entry for entry in scan if entry.name == name), None)
    except OSError:  # removed or unreadable: the walk finds nothing there either
        return None


def _policy(ws: Workspace) -> tuple[bytes | None, Policy]:
    """The policy file's bytes (None: there is none) and the policy they parse to. The
    bytes are read every time (one small read); parsing them is most of what a listing
    costs, and the same bytes parse to the same policy, so that is kept (``_parsed``)."""
    data = policy_bytes(ws.top)
    return data, _parsed(data)


@functools.lru_cache(maxsize=4)
def _parsed(data: bytes | None) -> Policy:
    """``parse_policy``, kept per policy text (an invalid one raises again each time)."""
    return parse_policy(data)


def _who(event: Event | None) -> dict[str, Any] | None:
    return None if event is None else {"actor": event.actor, "ts": event.ts, "type": event.type}
