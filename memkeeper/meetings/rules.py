"""How a meeting changes (docs/reference.md §4.32): opened, a plan proposed, a plan accepted,
escalated (by a participant, or once its deadline has passed), resolved. Each transition is a
pure function from a meeting to the next one, its revision one higher; nothing leaves
``resolved``. Who may do what:

- a participant proposes, accepts, escalates, and resolves with a plan every participant
  has accepted;
- anyone else — a human, or the owners CODEOWNERS names — resolves with any plan, accepted
  or not: that is how an escalated meeting ends.
"""

from __future__ import annotations

from dataclasses import replace

from memkeeper.claims.targets import covers, normalize_target, targets_overlap
from memkeeper.errors import Invalid, MemkeeperError
from memkeeper.meetings.records import KINDS, Meeting, Offer, Plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

DEFAULT_DEADLINE_S = 900.0  # a quarter of an hour to agree, then a human decides
MAX_PARTICIPANTS = 16
MAX_OFFERS = 64


class StaleMeeting(MemkeeperError):
    """Exit 3: ``--expect-rev`` is not the meeting's revision; ``current`` is the meeting now."""

    exit_code = 3
    status = "conflict"
    reason = "stale_revision"


def opened(
    id: int,
    by: str,
    participants: Iterable[str],
    targets: Iterable[str],
    now: float,
    *,
    deadline_s: float = DEFAULT_DEADLINE_S,
    claims: Sequence[str] = (),
    reason: str = "",
) -> Meeting:
    """A new meeting (rev 1) between ``participants`` (``by`` among them) on ``targets``."""
    people = tuple(dict.fromkeys((by, *participants)))
    if len(people) < 2:
        raise Invalid("a meeting needs another participant — name one with --with AGENT")
    if len(people) > MAX_PARTICIPANTS:
        raise Invalid(f"a meeting takes at most {MAX_PARTICIPANTS} participants")
    contested = tuple(dict.fromkeys(normalize_target(t) for t in targets))
    if not contested:
        raise Invalid("a meeting needs the contested targets — name them with --targets T…")
    if not deadline_s > 0:
        raise Invalid(f"the deadline must be a positive number of seconds, not {deadline_s}")
    return Meeting(
        id, 1, "open", by, now, now + deadline_s, people, contested, tuple(claims), reason
    )


def check_rev(m: Meeting, expect_rev: int) -> None:
    """``StaleMeeting`` (with the meeting as it is now) unless it is at ``expect_rev``."""
    if m.rev != expect_rev:
        raise StaleMeeting(
            f"meeting {m.id} is at rev {m.rev}, not {expect_rev}: it changed since you read "
            f"it — read it again (memkeeper meeting show {m.id}) and redo your change",
            expected={"rev": expect_rev},
            current=m,
        )


def plan(
    kind: str,
    m: Meeting,
    *,
    assign: Mapping[str, Sequence[str]] | None = None,
    who: str | None = None,
    note: str = "",
) -> Plan:
    """A valid plan for ``m``: a split's assignments lie within the contested targets and never
    overlap one another's; ``who`` is a participant."""
    if kind not in KINDS:
        raise Invalid(f"unknown resolution {kind!r}: one of {', '.join(KINDS)}")
    if kind in ("serialize", "handoff") and who not in m.participants:
        flag = "--first" if kind == "serialize" else "--to"
        raise Invalid(f"{kind} names a participant with {flag}: one of {', '.join(m.participants)}")
    if kind != "split":
        return Plan(kind, (), who if kind in ("serialize", "handoff") else None, note)
    return Plan("split", split(m.targets, m.participants, assign or {}), None, note)


def split(
    contested: Sequence[str], participants: Sequence[str], assign: Mapping[str, Sequence[str]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each participant's sub-targets, normalized: every one within a contested target, no
    two participants' overlapping (a participant may get none)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for agent, given in assign.items():
        if agent not in participants:
            raise Invalid(f"{agent} is not in this meeting: assign to {', '.join(participants)}")
        targets = tuple(dict.fromkeys(normalize_target(t) for t in given))
        for target in targets:
            if not any(covers(c, target) for c in contested):
                raise Invalid(
                    f"{target} (assigned to {agent}) is not within the contested "
                    f"{', '.join(contested)} — assign parts of them only"
                )
        for other, theirs in out:
            clash = next((t for t in targets for u in theirs if targets_overlap(t, u)), None)
            if clash is not None:
                raise Invalid(
                    f"{clash} is assigned to {agent} and overlaps what {other} is assigned — "
                    "give each part to one participant"
                )
        out.append((agent, targets))
    if not any(targets for _, targets in out):
        raise Invalid("a split assigns targets: --assign AGENT=TARGET[,TARGET…] per participant")
    return tuple(out)


def _live(m: Meeting, what: str) -> None:
    if m.state in ("resolved", "serializing"):
        raise Invalid(f"meeting {m.id} is {m.state}: it cannot be {what} — open another one")


def _member(m: Meeting, who: str, what: str) -> None:
    if who not in m.participants:
        raise Invalid(
            f"{who} is not in meeting {m.id} ({', '.join(m.participants)}): only a "
            f"participant can {what}"
        )


def propose(m: Meeting, by: str, p: Plan, now: float) -> Meeting:
    """``p`` added as the next proposal, accepted by its proposer."""
    _live(m, "proposed to")
    _member(m, by, "propose")
    if len(m.offers) >= MAX_OFFERS:
        raise Invalid(f"meeting {m.id} has {MAX_OFFERS} proposals: accept one, or escalate it")
    offer = Offer(len(m.offers) + 1, by, now, p, (by,))
    return replace(m, rev=m.rev + 1, offers=(*m.offers, offer))


def accept(m: Meeting, by: str, n: int) -> Meeting:
    """Proposal ``n`` accepted by ``by`` too."""
    _live(m, "accepted in")
    _member(m, by, "accept")
    offer = _offer(m, n)
    if by in offer.accepted_by:
        return m
    done = replace(offer, accepted_by=(*offer.accepted_by, by))
    return replace(m, rev=m.rev + 1, offers=tuple(done if o.n == n else o for o in m.offers))


def agreed(m: Meeting, n: int) -> bool:
    """Whether every participant has accepted proposal ``n``."""
    return set(m.participants) <= set(_offer(m, n).accepted_by)


def _offer(m: Meeting, n: int) -> Offer:
    found = m.offer(n)
    if found is None:
        raise Invalid(f"meeting {m.id} has no proposal {n} — see: memkeeper meeting show {m.id}")
    return found


def may_resolve(m: Meeting, by: str, p: Plan, n: int | None) -> None:
    """``Invalid`` unless ``by`` may resolve ``m`` with ``p`` (proposal ``n``, if one)."""
    _live(m, "resolved again")
    if by not in m.participants or p.kind == "escalate":
        return
    if n is None or not agreed(m, n):
        waiting = (
            "" if n is None else ", ".join(set(m.participants) - set(_offer(m, n).accepted_by))
        )
        raise Invalid(
            f"meeting {m.id}: a participant resolves only with a proposal every participant "
            f"accepted{' (not yet: ' + waiting + ')' if waiting else ''} — propose one "
            f"(memkeeper meeting propose {m.id} …), or escalate it to a human"
        )


def escalated(m: Meeting, owners: Sequence[str]) -> Meeting:
    """Handed to a human: the owners CODEOWNERS names for the contested paths."""
    _live(m, "escalated")
    return replace(m, rev=m.rev + 1, state="escalated", owners=tuple(owners))


def resolved(
    m: Meeting,
    by: str,
    p: Plan,
    now: float,
    joint: Sequence[str] = (),
    standing: Mapping[str, Sequence[str]] | None = None,
) -> Meeting:
    """Closed with ``p`` (``joint``: a join's claims, held by every participant); a
    ``serialize`` goes ``serializing`` instead, its first participant's turn, the others in
    the meeting's order after it (``standing``: each one's live claims now)."""
    _live(m, "resolved again")
    done = replace(
        m, rev=m.rev + 1, state="resolved", resolution=p, resolved_by=by, resolved_at=now,
        joint=tuple(joint),
    )  # fmt: skip
    if p.kind != "serialize" or p.who is None:
        return done
    order = (p.who, *(a for a in m.participants if a != p.who))
    kept = tuple((a, tuple((standing or {}).get(a, ()))) for a in order[1:])
    return replace(done, state="serializing", order=order, turn=0, standing=kept)


def due(m: Meeting, now: float) -> bool:
    """Whether ``m`` is open past its deadline: it escalates (judged when it is next read)."""
    return m.state == "open" and now >= m.deadline
