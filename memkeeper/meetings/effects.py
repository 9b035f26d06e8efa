"""What a meeting's resolution does to the claims in contention (docs/reference.md §4.32), as
values for the shell to apply in one claims transaction. Pure.

After a resolution each participant holds, of the contested targets, exactly what the plan
gives it: a ``split`` its assignment, a ``serialize`` or a ``handoff`` everything to the one
named (the others wait, or have given it up), a ``join`` everything under the claim that
held it, shared by every participant; ``escalate`` changes no claim. A participant keeps the
rest of its claims' targets; its first claim in contention takes what it is given, else it
is granted a new claim on it; a claim left with nothing is released.
"""

from __future__ import annotations

from dataclasses import dataclass

from memkeeper.claims.targets import covers, targets_overlap
from memkeeper.errors import Invalid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.meetings.records import Meeting, Plan


@dataclass(frozen=True, slots=True)
class Narrow:
    """Claim ``claim_id`` now holds ``targets`` (none: it is released)."""

    claim_id: str
    targets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Grant:
    """``agent`` is granted a new write claim on ``targets``."""

    agent: str
    targets: tuple[str, ...]
    strict: bool


@dataclass(frozen=True, slots=True)
class Effects:
    narrow: tuple[Narrow, ...] = ()
    grant: tuple[Grant, ...] = ()
    joint: tuple[str, ...] = ()  # join: the claim every participant now holds


def in_contention(m: Meeting, claims: Sequence[Claim]) -> list[Claim]:
    """The participants' live write claims on the contested targets, oldest grant first; a
    target wider than every contested one is refused (it cannot be cut down to a part)."""
    found = []
    for c in sorted(claims, key=lambda c: c.token):
        if c.agent not in m.participants or c.mode != "write":
            continue
        hit = [t for t in c.targets if any(targets_overlap(t, u) for u in m.targets)]
        for t in hit:
            if not any(covers(u, t) for u in m.targets):
                raise Invalid(
                    f"claim {c.id} of {c.agent} holds {t}, wider than the contested "
                    f"{', '.join(m.targets)}: a meeting cannot cut it down — open one on {t}"
                )
        if hit:
            found.append(c)
    return found


def given(m: Meeting, p: Plan, holder: str | None) -> dict[str, tuple[str, ...]]:
    """What each participant holds of the contested targets afterwards."""
    if p.kind == "split":
        return {a: p.assigned(a) for a in m.participants}
    if p.kind in ("serialize", "handoff"):
        return {a: m.targets if a == p.who else () for a in m.participants}
    if p.kind == "join":
        return {a: m.targets if a == holder else () for a in m.participants}
    return {}


def effects(m: Meeting, p: Plan, claims: Sequence[Claim]) -> Effects:
    """The changes ``p`` makes to ``claims`` (the live ones)."""
    if p.kind == "escalate":
        return Effects()
    held = in_contention(m, claims)
    if p.kind == "join" and not held:
        raise Invalid(
            f"nobody in meeting {m.id} holds {', '.join(m.targets)}: a join shares a claim — "
            "claim them, then join"
        )
    holder = held[0].agent if held else None
    shares = given(m, p, holder)
    strict = any(c.strict for c in held)
    narrow, grant = [], []
    for agent in m.participants:
        mine = [c for c in held if c.agent == agent]
        share = shares.get(agent, ())
        for n, c in enumerate(mine):
            rest = tuple(t for t in c.targets if not any(targets_overlap(t, u) for u in m.targets))
            after = tuple(dict.fromkeys(rest + share)) if n == 0 else rest
            if set(after) != set(c.targets):
                narrow.append(Narrow(c.id, after))
        if share and not mine:
            grant.append(Grant(agent, share, strict))
    joint = (held[0].id,) if p.kind == "join" else ()
    return Effects(tuple(narrow), tuple(grant), joint)
