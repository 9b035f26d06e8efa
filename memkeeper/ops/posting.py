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
    from collections.abc import Iterable

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.coordination import Message
    from memkeeper.ops.workspace import Workspace


def post(ws: Workspace, sender: str, to: str, kind: str, about: str | None, text: str) -> Message:
    """Post a message inside the caller's transaction (``message.sent``), keeping the bound."""
    posted = ws.store.post_message(sender, to, kind, about, text, iso_utc(ws.now()))
    data = {"message": posted.id, "to": to, "kind": kind, "about": about}
    ws.record("message.sent", None, None, data, sender)
    _trim(ws)
    return posted


def overlaps(ws: Workspace, request: Request, live: Iterable[Claim]) -> None:
    """Tell each other identity whose live claims ``request`` queued behind, inside the claim
    transaction that queued it (``messages.overlaps``)."""
    for holder, text in messages.overlaps(request, live):
        post(ws, request.agent, holder, "overlap", request.id, text)


def _trim(ws: Workspace) -> None:
    """Keep the messages within their bound (``messages.to_trim``), in the transaction that
    posts a new one."""
    before = iso_utc(ws.now() - messages.KEEP_S)
    drop = messages.to_trim(ws.store.kept_messages(), before, messages.KEEP_GIVEN)
    ws.store.drop_messages(drop, before)
