"""A ``serialize`` resolution's turns, handed over by the store (docs/reference.md §4.32): the
shell of ``meetings.turns``.

``hand_over`` runs inside a claims transaction (``ClaimTable.transaction``) whenever one let
targets go — a release, a completion, an abandon, an expiry swept (by any claim operation, or
the daemon's sweep), a scope change, a narrowing — so a release hands the contested targets
over in its own commit. ``ops.meetings.settle`` runs it in a claims transaction of its own at
every channel delivery, for a claim that expired with nobody to sweep it (``due`` says whether
a turn is due, without a lock).

Exactly once under concurrency: each meeting is read again inside the transaction and
compared on its ``rev`` before it is written (SQLite: the ``BEGIN IMMEDIATE`` lock; etcd: the
read key compared at the commit, the loser retried), so two deliveries settling at once
grant one turn once. Each hand-over: the meeting's write (rev one higher), a grant through
the claims' own code (fresh fencing token, ``claim.granted``), ``meeting.handed_over``, a
``meeting.skipped`` for each participant passed over, and one ``meeting`` message to the new
holder.
"""

from __future__ import annotations

from typing import Protocol

from memkeeper.claims import decisions as claim_rules
from memkeeper.meetings import turns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.meetings.records import Meeting
    from memkeeper.ops.workspace import Workspace

SYSTEM = "memkeeper"  # who hands a turn over


class ClaimTable(Protocol):
    """What a hand-over needs of ``ops.claims.ClaimTable`` (which calls it: no import back)."""

    ws: Workspace
    held: list[Claim]
    changed: bool

    @property
    def default_ttl(self) -> int: ...

    def _grant(self, request: Request, now: float) -> Claim: ...


def due(ws: Workspace) -> bool:
    """Whether a serializing meeting's turn is due now (the common case: no such meeting, one
    read of an empty index)."""
    found = ws.store.meetings.serializing_meetings() if ws.has_store else []
    if not found:
        return False
    now = ws.claim_now()
    live = [c for c in ws.store.claim_rows() if c.is_live(now)]
    return any(turns.next_turn(m, live, now) is not None for m in found)


def hand_over(table: ClaimTable, now: float) -> None:
    """Give every serializing meeting's turn on where it is due (inside ``table``'s
    transaction)."""
    for m in table.ws.store.meetings.serializing_meetings():
        turn = turns.next_turn(m, table.held, now)
        if turn is not None:
            _apply(table, m, turn, now)


def _apply(table: ClaimTable, m: Meeting, turn: turns.Turn, now: float) -> None:
    ws = table.ws
    stored = ws.store.meetings.meeting(m.id)  # compare-and-swap on the rev, inside the transaction
    if stored is None or stored.rev != m.rev:
        return
    after = turn.meeting
    ws.store.meetings.put_meeting(after)
    for agent, why in turn.skipped:
        data = {"meeting": m.id, "rev": after.rev, "agent": agent, "reason": why}
        ws.record("meeting.skipped", None, None, data, SYSTEM)
    claim_id = None
    if turn.to is not None:
        request = claim_rules.make_request(
            f"c{table.ws.store.bump('request')}", turn.to, m.targets, strict=m.strict,
            ttl=table.default_ttl, objective=f"meeting {m.id}", arrival=0,
        )  # fmt: skip
        claim = table._grant(request, now)
        claim_id = claim.id
        _tell(ws, after, turn.to, claim.id, claim.token)
    data = {"meeting": m.id, "rev": after.rev, "to": turn.to, "claim": claim_id}
    data |= {"from": m.order[m.turn], "state": after.state}
    data["skipped"] = [{"agent": a, "reason": why} for a, why in turn.skipped]
    ws.record("meeting.handed_over", None, None, data, SYSTEM)
    table.changed = True


def _tell(ws: Workspace, m: Meeting, to: str, claim_id: str, token: int) -> None:
    from memkeeper.ops.posting import post

    later = m.order[m.turn + 1 :]
    then = f"; then {', '.join(later)}" if later else ""
    text = (
        f"your turn in meeting {m.id}: you now hold claim {claim_id} on "
        f"{', '.join(m.targets)} (fencing token {token}){then} — release it when done: "
        f"memkeeper release {claim_id}"
    )
    post(ws, SYSTEM, to, "meeting", f"meeting {m.id}", text)
