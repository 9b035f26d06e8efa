"""How claims look from outside: event data, JSON and sentences (pure)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from memkeeper.claims.decisions import describe
from memkeeper.errors import Invalid
from memkeeper.events import iso_utc

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.claims.waiters import WaiterRow


def ttl_warnings(ttl: float, ttl_cap: float) -> tuple[str, ...]:
    """The warning a claim or renewal with ``ttl`` above the policy's cap gets (it is capped)."""
    if ttl <= ttl_cap:
        return ()
    return (
        f"ttl {ttl:g} s is above the policy's leases.max_ttl of {ttl_cap:g} s: granted for "
        f"{ttl_cap:g} s — renew before it expires, or raise max_ttl in .memkeeper.yaml",
    )


def ended_error(claim_id: str, how: str | None, ts: str) -> Invalid:
    """What acting on a claim that is no longer live says (``how``: its state or the event
    that ended it; None: there never was one), the reason being ``how``."""
    if how is None:
        return Invalid(
            f"no claim {claim_id!r} — list the live ones with: memkeeper claims",
            reason="unknown_claim",
        )
    return Invalid(
        f"claim {claim_id} was {how} at {ts} — claim again and re-read what it covered",
        reason=how,
    )


def claim_data(claim: Claim) -> dict[str, Any]:
    """What a ``claim.*`` event records about the claim."""
    return {
        "id": claim.id,
        "token": claim.token,
        "mode": claim.mode,
        "targets": list(claim.targets),
        "priority": claim.priority,
        "strict": claim.strict,
        "expires_at": iso_utc(claim.expires_at),
        "objective": claim.objective,
    }


def claim_json(claim: Claim, now: float) -> dict[str, Any]:
    return {
        **claim_data(claim),
        "agent": claim.agent,
        "granted_at": iso_utc(claim.granted_at),
        "seconds_left": claim.seconds_left(now),
    }


def holder_json(claim: Claim, now: float) -> dict[str, Any]:
    keep = ("agent", "id", "mode", "targets", "strict", "expires_at", "seconds_left")
    full = claim_json(claim, now)
    return {name: full[name] for name in keep}


def waiter_json(row: WaiterRow, now: float) -> dict[str, Any]:
    r = row.request
    return {
        "id": r.id,
        "agent": r.agent,
        "mode": r.mode,
        "targets": list(r.targets),
        "priority": r.priority,
        "arrival": r.arrival,
        "pid": row.pid,
        "seconds_left": math.ceil(max(0.0, row.deadline - now)),
    }


def _queued(request: Request) -> str:
    return f"{request.agent} queued first ({request.id}, priority {request.priority})"


_BUSY = {
    "held": "{scope} is busy: {who} — try again later, or queue with --wait SECONDS",
    "timeout": "gave up waiting for {scope}: {who} — try again later, or wait longer",
    "deadlock": "claim {id} on {scope} was aborted to break a deadlock (its holders wait for "
    "you): {who} — release what you hold that they need, then claim again",
    "expired": "claim {id} on {scope} was granted but expired before it was collected — "
    "claim again with a longer --ttl",
}


def busy_message(
    request: Request, reason: str, holders: Sequence[Claim], ahead: Sequence[Request], now: float
) -> str:
    """Why ``request`` was not granted, naming who holds or is queued ahead, and what to do."""
    who = "; ".join([describe(c, now) for c in holders] + [_queued(w) for w in ahead])
    template = _BUSY.get(reason, "claim {id} on {scope} was {reason}")
    scope = ", ".join(request.targets)
    return template.format(id=request.id, scope=scope, reason=reason, who=who or "nobody now")
