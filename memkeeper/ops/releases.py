"""Release requests and their answers (docs/reference.md §4.31): a blocked claim
asks each holder that stands in its way to release (``ask``: one request per holder's claim
until it is answered), the holder answers (``answer``: it releases the claim, or says why not
and when), and the requester is told through the channel (a ``release-answer`` message). The
dashboard's view of them is ``view``: the requests of the last day and each one's answer.

Events: ``message.sent`` (each request and answer), ``release.answered``.
"""

from __future__ import annotations

from memkeeper import limits
from memkeeper.errors import Invalid
from memkeeper.events import iso_utc
from memkeeper.mail import messages
from memkeeper.ops import mail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.coordination import Message
    from memkeeper.ops.workspace import Workspace

VIEW_WINDOW_S = 86_400.0
MAX_ETA_S = 7 * 86_400.0


def ask(ws: Workspace, holders: Iterable[Claim], text: str = "") -> list[Message]:
    """A release request to the holder of each of ``holders`` (another identity's live
    claims), but none to a holder already asked about that claim and not yet answered."""
    sent = []
    for claim in holders:
        if claim.agent == ws.agent or _pending(ws, claim):
            continue
        reason = text.strip() or f"{ws.agent} is waiting for {', '.join(claim.targets)}"
        sent.append(mail.send(ws, claim.agent, reason, kind="release-request", about=claim.id))
    return sent


def _pending(ws: Workspace, claim: Claim) -> bool:
    """Whether this identity asked ``claim``'s holder for it already, unanswered so far."""
    return any(
        m.sender == ws.agent and m.kind == "release-request" and m.about == claim.id
        for m in ws.store.mail.messages_for(claim.agent)
    )


def answer(
    ws: Workspace,
    message_id: int,
    *,
    release: bool = False,
    reason: str | None = None,
    eta: float | None = None,
) -> Message:
    """Answer release request ``message_id`` (sent to this identity): ``release`` gives the
    claim back; else ``reason`` (and ``eta``, seconds from now) says why not yet. The
    requester gets a ``release-answer`` message; the request is acknowledged."""
    request = ws.store.mail.message(message_id) if ws.has_store else None
    if request is None or request.kind != "release-request" or request.to != ws.agent:
        raise Invalid(
            f"there is no release request {message_id} for {ws.agent} — list yours with: "
            "memkeeper inbox"
        )
    if release == (reason is not None):
        raise Invalid("answer with --release, or with --reason T (and --eta S): one of the two")
    if eta is not None and not 0 <= eta <= MAX_ETA_S:
        raise Invalid(f"--eta is seconds from now, 0 to {MAX_ETA_S:.0f}, not {eta}")
    if reason is not None:
        reason = messages.text(limits.text(reason, "--reason", limit=messages.MAX_TEXT_CHARS))
    claim_id = request.about or ""
    if _answered(ws, message_id):
        raise Invalid(
            f"release request {message_id} was answered already — see: memkeeper inbox --all"
        )
    if release:
        text = _release(ws, claim_id)
    else:
        when = "" if eta is None else f" — expected in {eta:.0f} s (by {iso_utc(ws.now() + eta)})"
        text = f"keeps claim {claim_id} for now: {reason}{when}"
    told = mail.send(ws, request.sender, text, kind="release-answer", about=claim_id)

    def once() -> None:
        with ws.store.writing():
            ws.store.mail.ack_message(ws.agent, message_id, iso_utc(ws.now()))
            data = {"request": message_id, "answer": told.id, "claim": claim_id}
            data |= {"released": release, "reason": reason, "eta_s": eta}
            ws.record("release.answered", None, None, data)

    ws.again(once)
    return told


def _release(ws: Workspace, claim_id: str) -> str:
    from memkeeper.ops.claims import ClaimTable

    try:
        ClaimTable(ws).release(claim_id)
    except Invalid as exc:  # ended already, or not this identity's
        if getattr(exc, "reason", None) == "unknown_claim":
            raise
        return f"claim {claim_id} is no longer held ({exc.message})"
    return f"released claim {claim_id}: claim its targets now"


def _answered(ws: Workspace, message_id: int) -> bool:
    since = iso_utc(ws.now() - VIEW_WINDOW_S * 7)
    found = ws.store.events_typed(("release.answered",), since)
    return any(e.data.get("request") == message_id for e in found)


def view(ws: Workspace) -> list[dict[str, Any]]:
    """The release requests of the last day, newest first, each with its answer (or None):
    what the dashboard shows."""
    if not ws.has_store:
        return []
    since = iso_utc(ws.now() - VIEW_WINDOW_S)
    found = ws.store.events_typed(("message.sent", "release.answered"), since)
    answers = {e.data["request"]: e for e in found if e.type == "release.answered"}
    out = []
    for e in found:
        if e.type != "message.sent" or e.data.get("kind") != "release-request":
            continue
        sent = ws.store.mail.message(e.data["message"])
        said = answers.get(e.data["message"])
        out.append({
            "id": e.data["message"], "from": e.actor, "to": e.data["to"],
            "claim": e.data["about"], "sent_at": e.ts, "text": sent.text if sent else "",
            "answer": None if said is None else {
                "at": said.ts, "released": said.data["released"],
                "reason": said.data["reason"], "eta_s": said.data["eta_s"],
            },
        })  # fmt: skip
    return out[::-1]
