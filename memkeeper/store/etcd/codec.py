"""The etcd store's values: records as compact JSON (``keys`` says which key holds which), bytes
as their text when they are UTF-8 (memkeeper indexes only UTF-8 files), else ``{"b64": …}``."""

from __future__ import annotations

import base64
import json

from memkeeper.coordination import Proposal
from memkeeper.records import Event, SectionRow
from memkeeper.store.etcd.keys import number_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.claims.waiters import WaiterRow

_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def encode(value: Any) -> bytes:
    """``value`` as compact JSON, keys sorted."""
    return _ENCODER.encode(value).encode()


def bytes_json(data: bytes) -> Any:
    """Bytes as JSON: the text when they are UTF-8, else ``{"b64": …}``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def json_bytes(value: Any) -> bytes:
    """``bytes_json`` undone."""
    if isinstance(value, str):
        return value.encode("utf-8")
    return base64.b64decode(value["b64"])


def row_json(r: SectionRow) -> list[Any]:
    """A section row as the list ``P/sec/<path>`` holds under its key."""
    heading, body = bytes_json(r.heading), bytes_json(r.body)
    return [r.ord, r.rev, r.hash, r.present, r.title, r.level, r.base, heading, body, r.lines]


def row(key: str, v: list[Any]) -> SectionRow:
    ord_, rev, hash_, present, title, level, base, heading, body, lines = v
    return SectionRow(
        key, ord_, rev, hash_, present, title, level, base, json_bytes(heading),
        json_bytes(body), lines,
    )  # fmt: skip


def event_json(event: Event) -> bytes:
    """An event as ``P/ev/<id>`` holds it (its id is the key's)."""
    e = event
    values = [e.ts, e.actor, e.type, e.path, e.section, e.data, e.prev, e.hash]
    return encode(values if e.signer is None else [*values, e.signer, e.sig])


def event(key: bytes, raw: bytes) -> Event:
    """An event from its value: eight fields, or ten with its signer and signature."""
    return Event(number_of(key), *json.loads(raw))


def proposal_json(p: Proposal) -> bytes:
    values = list(p)
    values[4] = bytes_json(p.body)
    return encode(values)


def proposal(raw: bytes) -> Proposal:
    values = json.loads(raw)
    values[4] = json_bytes(values[4])
    return Proposal(*values)


def claim_json(c: Claim, lease: int, granted: int) -> bytes:
    """A claim as ``P/lease/claim\\0<id>`` holds it, with the etcd lease holding the key and
    that lease's TTL."""
    fields = [c.token, c.agent, c.mode, list(c.targets), c.priority, c.strict]
    plan = None if c.plan is None else c.plan.to_json()
    return encode([*fields, c.granted_at, c.expires_at, c.objective, lease, granted, plan])


def claim_lease(raw: bytes) -> tuple[int, int] | None:
    """The etcd lease id and TTL a claim's row names (None: a row from before leases)."""
    fields = json.loads(raw)
    return (int(fields[9]), int(fields[10])) if len(fields) >= 11 and fields[9] else None


def claim(claim_id: str, raw: bytes, *, alive: bool | None = None) -> Claim:
    """A claim's row (or grant), with the store's verdict on it (``Claim.alive``)."""
    from memkeeper.claims.decisions import Claim  # not on the read/patch path

    fields = json.loads(raw)
    token, agent, mode, targets, priority, strict, granted, expires, objective = fields[:9]
    plan = None
    if len(fields) > 11 and fields[11] is not None:  # format 4: what the claim announces
        from memkeeper.claims.plan import Plan

        plan = Plan.from_json(fields[11])
    return Claim(
        claim_id, int(token), agent, mode, tuple(targets), int(priority), bool(strict),
        float(granted), float(expires), objective, alive=alive, plan=plan,
    )  # fmt: skip


def waiter_json(w: WaiterRow, lease: int = 0) -> bytes:
    r = w.request
    request = [r.arrival, r.agent, r.mode, list(r.targets), r.priority, r.strict, r.ttl]
    plan = None if r.plan is None else r.plan.to_json()
    row = [*request, r.objective, w.pid, w.deadline, w.state, w.reason, plan]
    return encode([*row, lease] if lease else row)


def waiter_lease(raw: bytes) -> int:
    """The etcd lease holding a waiter's key (0: none, a row written before they had one)."""
    fields = json.loads(raw)
    return int(fields[13]) if len(fields) > 13 and fields[13] else 0


def waiter(request_id: str, raw: bytes) -> WaiterRow:
    from memkeeper.claims.decisions import Request
    from memkeeper.claims.waiters import WaiterRow  # not on the read/patch path

    arrival, agent, mode, targets, priority, strict, ttl, objective, *rest = json.loads(raw)
    request = Request(
        request_id, agent, mode, tuple(targets), int(priority), bool(strict), float(ttl),
        objective, int(arrival),
    )  # fmt: skip
    pid, deadline, state, reason = rest[:4]
    if len(rest) > 4 and rest[4] is not None:  # format 4: what the claim announces
        from dataclasses import replace

        from memkeeper.claims.plan import Plan

        request = replace(request, plan=Plan.from_json(rest[4]))
    return WaiterRow(request, int(pid), float(deadline), state, reason)
