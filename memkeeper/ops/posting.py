"""A message posted inside the caller's transaction (docs/reference.md §4.28): the one place
messages enter the store, keeping their bound; below ``ops.mail`` (which sends, lists and
delivers them) so that a claim's transaction can tell the holders a request queued behind
(``overlaps``) without the claims depending on delivery.
"""

from __future__ import annotations

from memkeeper.events import iso_utc
from memkeeper.mail import messages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.coordination import Message
    from memkeeper.ops.workspace import Workspace


def post(
    ws: Workspace,
    sender: str,
    to: str,
    kind: str,
    about: str | None,
    text: str,
    waiting: Collection[str] | None = None,
) -> Message:
    """Post a message inside the caller's transaction (``message.sent``), keeping the bound
    (``waiting``: the requests queued now, when the caller knows them — the overlap notices
    about the others are withdrawn, ``messages.to_trim``)."""
    posted = ws.store.mail.post_message(sender, to, kind, about, text, iso_utc(ws.now()))
    data = {"message": posted.id, "to": to, "kind": kind, "about": about}
    ws.record("message.sent", None, None, data, sender)
    _trim(ws, waiting)
    return posted


def overlaps(
    ws: Workspace, request: Request, live: Iterable[Claim], waiting: Collection[str]
) -> None:
    """Tell each other identity whose live claims ``request`` queued behind, inside the claim
    transaction that queued it (``messages.overlaps``); ``waiting``: the requests queued now
    (``request`` among them)."""
    for holder, text in messages.overlaps(request, live):
        post(ws, request.agent, holder, "overlap", request.id, text, waiting)


def handoff(ws: Workspace, old: ClaimRecord, new_id: str) -> None:
    """Tell this identity, which took ``old`` over as ``new_id``, what its predecessor left
    for it (``handoffs.handoff_text``), inside the takeover's transaction: a ``handoff``
    message from the predecessor. Its ``message.sent`` event is this identity's (it relays
    the words the predecessor's own signed ``claim.abandoned`` recorded), naming whose they
    are."""
    from memkeeper.mail.handoffs import handoff_text

    text = handoff_text(old, new_id)
    posted = ws.store.mail.post_message(
        old.agent, ws.agent, "handoff", new_id, text, iso_utc(ws.now())
    )
    data = {"message": posted.id, "to": ws.agent, "kind": "handoff", "about": new_id}
    ws.record("message.sent", None, None, {**data, "words_of": old.agent, "claim": old.id})
    _trim(ws, None)


def _trim(ws: Workspace, waiting: Collection[str] | None) -> None:
    """Keep the messages within their bound (``messages.to_trim``), in the transaction that
    posts a new one."""
    before = iso_utc(ws.now() - messages.KEEP_S)
    drop = messages.to_trim(ws.store.mail.kept_messages(), before, messages.KEEP_GIVEN, waiting)
    ws.store.mail.drop_messages(drop, before)
