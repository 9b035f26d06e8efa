"""What a claim that other agents' claims stand in the way of does besides waiting or being
refused (docs/reference.md §4.28 and §4.32): with ``--request-release`` it asks each holder
in its way to release (``releases.ask``); where the claim is strict — asked so, or a holder's
claim is — and the policy's ``meetings.on_overlap`` is true, it opens a meeting with each
such holder on what they both claim.

A claim that will wait (``--wait``) acts before it waits, on the holders in its way then; one
that will not acts once it is refused (exit 5), on the holders the refusal names, and the
refusal says what it did (``release_requested``, ``meetings``).
"""

from __future__ import annotations

from memkeeper.claims import decisions as rules
from memkeeper.claims.targets import targets_overlap
from memkeeper.errors import Busy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from memkeeper.claims.decisions import Claim, Mode
    from memkeeper.ops.workspace import Workspace


def claim(
    ws: Workspace,
    take: Callable[[], Claim],
    targets: Sequence[str],
    *,
    mode: Mode,
    strict: bool,
    wait: float | None,
    request_release: bool,
) -> Claim:
    """``take()`` (the claim itself), with the steps above around it."""
    meet = _meets(ws)
    if not request_release and not meet:
        return take()
    if wait:
        _act(ws, _in_way(ws, targets, mode), targets, strict, request_release, meet)
        return take()
    try:
        return take()
    except Busy as busy:
        ids = {h["id"] for h in busy.holders}
        held = [c for c in ws.store.claim_rows() if c.id in ids]
        asked, met = _act(ws, held, targets, strict, request_release, meet)
        busy.fields |= {"release_requested": asked, "meetings": met}
        raise


def _meets(ws: Workspace) -> bool:
    return ws.meeting_settings()[0]


def _in_way(ws: Workspace, targets: Sequence[str], mode: Mode) -> list[Claim]:
    from memkeeper.ops.claimwrites import resolve_target

    resolved = [resolve_target(ws, t) for t in targets]
    ask = rules.make_request("ask", ws.agent, resolved, mode=mode, ttl=1.0, arrival=0)
    now = ws.claim_now()
    return [c for c in rules.blockers(ws.store.claim_rows(), ask) if c.is_live(now)]


def _act(
    ws: Workspace,
    held: list[Claim],
    targets: Sequence[str],
    strict: bool,
    request_release: bool,
    meet: bool,
) -> tuple[list[int], list[int]]:
    """Ask and meet as the options say: the ids of the requests sent and meetings opened."""
    from memkeeper.ops import meetings, releases

    asked = [m.id for m in releases.ask(ws, held)] if request_release else []
    met = []
    if meet:
        from memkeeper.ops.claimwrites import resolve_target

        deadline = ws.meeting_settings()[1]
        mine = [resolve_target(ws, t) for t in targets]
        for c in held:
            if not (strict or c.strict) or _meeting_on(ws, c):
                continue
            contested = [t for t in c.targets if any(targets_overlap(t, u) for u in mine)]
            why = f"{ws.agent}'s strict claim on {', '.join(mine)} is blocked by claim {c.id}"
            m = meetings.open_meeting(
                ws, [c.agent], contested, deadline_s=deadline, reason=why, claims=[c.id]
            )
            met.append(m.id)
    return asked, met


def _meeting_on(ws: Workspace, c: Claim) -> bool:
    """Whether a meeting not yet resolved is about claim ``c`` already, with this identity."""
    return any(
        c.id in m.claims and ws.agent in m.participants for m in ws.store.meetings.meetings()
    )
