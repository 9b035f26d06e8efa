"""``Memory.mail``: messages between identities, the Python API's sub-façade over
``ops.mail`` (docs/reference.md §9)."""

from __future__ import annotations

from memkeeper.ops import mail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.coordination import Message
    from memkeeper.ops.workspace import Workspace


class Mailbox:
    """The messages of the identity a ``Memory`` acts as."""

    def __init__(self, workspace: Workspace) -> None:
        self._ws = workspace

    def send(
        self, to: str, text: str, *, kind: str = "message", about: str | None = None
    ) -> Message:
        """Post a message to ``to`` (an identity, or ``all``)."""
        return mail.send(self._ws, to, text, kind=kind, about=about)

    def inbox(self, *, acked: bool = False) -> list[Message]:
        """What is waiting for this identity, oldest first (acknowledged ones too with
        ``acked``)."""
        return mail.inbox(self._ws, acked=acked)

    def wait(self, timeout: float) -> list[Message]:
        """What is waiting for this identity; when nothing is, what comes within ``timeout``
        seconds (``[]``: nothing came). Blocks on a wake-up, never polls."""
        from memkeeper.ops import mailwait

        return mailwait.wait(self._ws, timeout)

    def hand_over(self, to: str, about: str, text: str) -> Message:
        """Hand ``about`` (a claim id, ``work:ID``) to ``to`` with a ``handoff`` message."""
        return mail.hand_over(self._ws, to, about, text)

    def ack(self, message_id: int) -> Message:
        """Acknowledge a message: it leaves the inbox."""
        return mail.ack(self._ws, message_id)

    def ack_many(self, message_ids: Sequence[int]) -> list[Message]:
        """Acknowledge several messages in one transaction (all or, for an id that is not
        this identity's, none)."""
        return mail.ack_many(self._ws, message_ids)

    def request_release(self, claim_id: str, text: str = "") -> Message:
        """Ask the holder of a live claim to release it."""
        return mail.request_release(self._ws, claim_id, text)

    def deliver(self, via: str = "api") -> tuple[list[Message], list[str]]:
        """What to tell this identity now, each thing once: ``(messages, notices)``."""
        return mail.deliver(self._ws, via)
