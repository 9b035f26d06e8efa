"""Meetings (docs/reference.md §4.32): an overlap between agents' claims, opened on request
(``open``) or by the policy when a strict claim is blocked (``ops.blocked``), then proposed
to, accepted and resolved — every change a compare-and-swap on the meeting's ``rev``, every
change an event (``meeting.opened``, ``.proposed``, ``.accepted``, ``.escalated``,
``.resolved``) and a ``meeting`` message to each other participant through the channel.

A meeting open past its deadline escalates lazily: whoever next lists, shows or changes it —
or a participant's next hook, which delivers its messages — escalates it first (event
``meeting.escalated`` by ``memkeeper``, reason ``deadline``), judged by the workspace's clock.
No daemon needs to run for a deadline to count.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from memkeeper.errors import Invalid
from memkeeper.events import iso_utc
from memkeeper.meetings import rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.meetings.effects import Effects
    from memkeeper.meetings.records import Meeting, Plan
    from memkeeper.ops.workspace import Workspace

SYSTEM = "memkeeper"  # who escalates a meeting whose deadline passed


@dataclass(frozen=True, slots=True)
class How:
    """A plan as asked for: ``kind``, a split's ``assign``, a serialize's or handoff's
    ``who``; made valid for a meeting by ``plan``."""

    kind: str
    assign: Mapping[str, Sequence[str]] | None = None
    who: str | None = None
    note: str = ""

    def plan(self, m: Meeting) -> Plan:
        return rules.plan(self.kind, m, assign=self.assign, who=self.who, note=self.note)

    def resolved(self, ws: Workspace) -> How:
        """The same, a split's targets resolved as a claim's are (``#build`` names
        ``project/build``)."""
        if not self.assign:
            return self
        from memkeeper.ops.claimwrites import resolve_target

        given = {a: [resolve_target(ws, t) for t in ts] for a, ts in self.assign.items()}
        return How(self.kind, given, self.who, self.note)


def open_meeting(
    ws: Workspace,
    others: Sequence[str],
    targets: Sequence[str],
    *,
    deadline_s: float | None = None,
    reason: str = "",
    claims: Sequence[str] = (),
) -> Meeting:
    """A new meeting between this identity and ``others`` on ``targets``."""
    from memkeeper.ops.claimwrites import resolve_target

    resolved = [resolve_target(ws, t) for t in targets]
    if deadline_s is None:  # the policy's meetings.deadline
        deadline_s = ws.meeting_settings()[1]
    draft = rules.opened(
        0, ws.agent, others, resolved, ws.now(), deadline_s=deadline_s, claims=claims,
        reason=reason,
    )  # fmt: skip

    def once() -> Meeting:
        with ws.store.writing():
            m = ws.store.meetings.add_meeting(draft)
            _trim(ws, m.opened_at)
            _record(ws, "meeting.opened", m, {"participants": list(m.participants)})
            _tell(ws, m, f"{ws.agent} opened meeting {m.id} on {', '.join(m.targets)}{_why(m)}")
        return m

    opened: Meeting = ws.again(once)
    return opened


def listing(ws: Workspace, *, resolved: bool = False) -> list[Meeting]:
    """Open and escalated meetings (resolved ones too), each due one escalated first."""
    if not ws.has_store:
        return []
    settle(ws)
    return ws.store.meetings.meetings(resolved=resolved)


def show(ws: Workspace, meeting_id: int) -> Meeting:
    settle(ws)
    return _get(ws, meeting_id)


def propose(ws: Workspace, meeting_id: int, expect_rev: int, how: How) -> Meeting:
    """Propose a plan; its proposer accepts it."""

    how = how.resolved(ws)

    def step(m: Meeting, now: float) -> Meeting:
        return rules.propose(m, ws.agent, how.plan(m), now)

    return _change(ws, meeting_id, expect_rev, step, "meeting.proposed", _proposed)


def accept(ws: Workspace, meeting_id: int, expect_rev: int, n: int) -> Meeting:
    def step(m: Meeting, now: float) -> Meeting:
        return rules.accept(m, ws.agent, n)

    def told(m: Meeting) -> str:
        return f"{ws.agent} accepted proposal {n} of meeting {m.id}"

    return _change(ws, meeting_id, expect_rev, step, "meeting.accepted", told, {"proposal": n})


def resolve(
    ws: Workspace,
    meeting_id: int,
    expect_rev: int,
    *,
    proposal: int | None = None,
    how: How | None = None,
) -> Meeting:
    """Resolve with proposal ``proposal`` or a plan given here (``how``); escalate
    is a resolution too, though it leaves the meeting to a human (state ``escalated``)."""
    settle(ws)
    how = None if how is None else how.resolved(ws)
    done: list[Meeting] = []

    def decide(claims: list[Claim]) -> tuple[int, Effects]:
        m = _get(ws, meeting_id)
        rules.check_rev(m, expect_rev)
        p = _chosen(m, proposal, how)
        rules.may_resolve(m, ws.agent, p, proposal)
        fx = effects(m, p, claims)
        now = ws.now()
        if p.kind == "escalate":
            done[:] = [rules.escalated(m, _owners(ws, m))]
        else:
            gone = {n.claim_id for n in fx.narrow if not n.targets}
            held = in_contention(m, claims)
            kept = [c for c in held if c.id not in gone]
            standing = {a: [c.id for c in kept if c.agent == a] for a in m.participants}
            after = rules.resolved(m, ws.agent, p, now, fx.joint, standing)
            done[:] = [replace(after, strict=any(c.strict for c in held))]
        return m.id, fx

    def commit() -> None:
        m = done[0]
        ws.store.meetings.put_meeting(m)
        if m.state == "escalated":
            _escalated(ws, m, ws.agent)
            return
        assert m.resolution is not None
        data = {"resolution": m.resolution.to_json(), "proposal": proposal}
        _record(ws, "meeting.resolved", m, data)
        then = ""
        if m.resolution.kind == "serialize":
            then = (f" — then, in turn, {', '.join(m.order[1:])}: each is granted "
                    f"{', '.join(m.targets)} once the one before holds them no more")  # fmt: skip
        said = f"{ws.agent} resolved meeting {m.id}: {_plan_text(m.resolution)}{then}"
        taker = m.resolution.who if m.resolution.kind == "handoff" else None
        if taker is not None and taker != ws.agent:  # the taker hears it with the work (§4.28)
            _give_handoff(ws, m, taker, said)
        _tell(ws, m, said, skip=taker)

    from memkeeper.meetings.effects import effects, in_contention
    from memkeeper.ops.meetingclaims import resolve_with

    resolve_with(ws, decide, commit)
    return done[0]


def settle(ws: Workspace) -> list[Meeting]:
    """Hand a serializing meeting's turn over where it is due (``ops.meetingturns``), then
    escalate every open meeting whose deadline has passed; those escalated."""
    if not ws.has_store:
        return []
    _hand_over(ws)
    now = ws.now()
    if not any(rules.due(m, now) for m in ws.store.meetings.meetings()):
        return []  # the common case: nothing written, no lock

    def once() -> list[Meeting]:
        out = []
        with ws.store.writing():
            for m in ws.store.meetings.meetings():
                if rules.due(m, now):
                    out.append(rules.escalated(m, _owners(ws, m)))
                    ws.store.meetings.put_meeting(out[-1])
                    _escalated(ws, out[-1], SYSTEM, "deadline")
        return out

    result: list[Meeting] = ws.again(once)
    return result


def _hand_over(ws: Workspace) -> None:
    """A serializing meeting's turn handed over where it is due, in a claims transaction of
    its own — only when one is: the common case writes nothing (``meetingturns``)."""
    from memkeeper.ops import meetingturns

    if not meetingturns.due(ws):
        return
    from memkeeper.ops.claims import ClaimTable

    table = ClaimTable(ws)

    def once() -> None:
        with table.transaction() as now:
            meetingturns.hand_over(table, now)

    ws.again(once)


# -- the shared steps ---------------------------------------------------------------------------


def _change(
    ws: Workspace,
    meeting_id: int,
    expect_rev: int,
    step: Callable[[Meeting, float], Meeting],
    event: str,
    told: Callable[[Meeting], str],
    extra: Mapping[str, object] | None = None,
) -> Meeting:
    settle(ws)

    def once() -> Meeting:
        with ws.store.writing():
            m = _get(ws, meeting_id)
            rules.check_rev(m, expect_rev)
            changed = step(m, ws.now())
            if changed is not m:
                ws.store.meetings.put_meeting(changed)
                _record(ws, event, changed, dict(extra or {}))
                _tell(ws, changed, told(changed))
        return changed

    result: Meeting = ws.again(once)
    return result


def _trim(ws: Workspace, now: float) -> None:
    """Keep the resolved meetings within the policy's bound (``meetings.keeping``), in the
    transaction that adds a new one."""
    from memkeeper.meetings.keeping import to_trim

    _, _, keep_days, keep = ws.meeting_settings()
    drop = to_trim(ws.store.meetings.kept_meetings(), now, keep_days, keep)
    if drop:
        ws.store.meetings.drop_meetings(drop)


def _get(ws: Workspace, meeting_id: int) -> Meeting:
    found = ws.store.meetings.meeting(meeting_id) if ws.has_store else None
    if found is None:
        raise Invalid(f"there is no meeting {meeting_id} — list them with: memkeeper meeting list")
    return found


def _chosen(m: Meeting, n: int | None, how: How | None) -> Plan:
    if (n is None) == (how is None):
        raise Invalid("resolve with one of --proposal N, --split, --serialize, --handoff, "
                      "--join or --escalate")  # fmt: skip
    if n is not None:
        offer = m.offer(n)
        if offer is None:
            raise Invalid(
                f"meeting {m.id} has no proposal {n} — see: memkeeper meeting show {m.id}"
            )
        return offer.plan
    assert how is not None
    return how.plan(m)


def _owners(ws: Workspace, m: Meeting) -> tuple[str, ...]:
    from memkeeper.meetings import codeowners  # pathspec: only when a meeting escalates

    for place in codeowners.PLACES:
        try:
            with open(os.path.join(ws.top, place), encoding="utf-8", errors="replace") as f:
                return codeowners.owners(f.read(), m.targets)
        except OSError:
            continue
    return ()


def _escalated(ws: Workspace, m: Meeting, by: str, reason: str = "asked") -> None:
    data = {"owners": list(m.owners), "reason": reason}
    _record(ws, "meeting.escalated", m, data, by)
    who = ", ".join(m.owners) or "nobody (no CODEOWNERS line matches): any human"
    why = "its deadline passed" if reason == "deadline" else f"{by} escalated it"
    _tell(ws, m, f"meeting {m.id} on {', '.join(m.targets)} goes to a human ({why}): {who}", by)


def _record(
    ws: Workspace, type: str, m: Meeting, extra: Mapping[str, Any], actor: str | None = None
) -> None:
    ws.record(type, None, None, {"meeting": m.id, "rev": m.rev, **extra}, actor)


def _tell(
    ws: Workspace, m: Meeting, text: str, by: str | None = None, skip: str | None = None
) -> None:
    """A ``meeting`` message about ``m`` to each participant but ``by`` (this identity) and
    ``skip``."""
    sender, at = by or ws.agent, iso_utc(ws.now())
    for to in m.participants:
        if to not in (sender, skip):
            msg = ws.store.mail.post_message(sender, to, "meeting", f"meeting {m.id}", text, at)
            data = {"message": msg.id, "to": to, "kind": "meeting", "about": msg.about}
            ws.record("message.sent", None, None, data, sender)


def _give_handoff(ws: Workspace, m: Meeting, taker: str, text: str) -> None:
    """The ``handoff`` message a meeting's handoff resolution gives its taker, with the plan's
    note (the giver's words), from this identity, in the resolution's transaction."""
    from memkeeper.ops.posting import post

    post(ws, ws.agent, taker, "handoff", f"meeting {m.id}", text)


def _proposed(m: Meeting) -> str:
    offer = m.offers[-1]
    return (
        f"{offer.by} proposes in meeting {m.id} (rev {m.rev}): {_plan_text(offer.plan)} — "
        f"accept it: memkeeper meeting accept {m.id} {offer.n} --expect-rev {m.rev}"
    )


def _plan_text(p: Plan) -> str:
    note = f" — {p.note.strip()}" if p.note.strip() else ""
    if p.kind == "split":
        return "split " + "; ".join(f"{a} takes {', '.join(t)}" for a, t in p.assign if t) + note
    if p.kind in ("serialize", "handoff"):
        how = "goes first" if p.kind == "serialize" else "takes over"
        return f"{p.kind}: {p.who} {how}{note}"
    return p.kind + note


def _why(m: Meeting) -> str:
    return f" ({m.reason})" if m.reason else ""
