"""``Memory.meetings``: meetings on overlapping claims, the Python API's sub-façade over
``ops.meetings`` (docs/reference.md §4.32), and the answers to release requests
(``ops.releases``)."""

from __future__ import annotations

from memkeeper.ops import meetings, releases
from memkeeper.ops.meetings import How

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memkeeper.coordination import Message
    from memkeeper.meetings.records import Meeting
    from memkeeper.ops.workspace import Workspace

__all__ = ["How", "MeetingRoom"]


class MeetingRoom:
    """The meetings the identity a ``Memory`` acts as can see and take part in."""

    def __init__(self, workspace: Workspace) -> None:
        self._ws = workspace

    def list(self, *, resolved: bool = False) -> list[Meeting]:
        """Open and escalated meetings (resolved ones too); a due one escalates first."""
        return meetings.listing(self._ws, resolved=resolved)

    def show(self, meeting_id: int) -> Meeting:
        return meetings.show(self._ws, meeting_id)

    def open(
        self,
        others: Sequence[str],
        targets: Sequence[str],
        *,
        deadline_s: float | None = None,
        reason: str = "",
    ) -> Meeting:
        """Open a meeting with ``others`` on the contested ``targets``."""
        return meetings.open_meeting(
            self._ws, others, targets, deadline_s=deadline_s, reason=reason
        )

    def propose(
        self,
        meeting_id: int,
        expect_rev: int,
        kind: str,
        *,
        assign: Mapping[str, Sequence[str]] | None = None,
        who: str | None = None,
        note: str = "",
    ) -> Meeting:
        """Propose ``kind`` (split with ``assign``, serialize or handoff with ``who``, …)."""
        return meetings.propose(self._ws, meeting_id, expect_rev, How(kind, assign, who, note))

    def accept(self, meeting_id: int, expect_rev: int, proposal: int) -> Meeting:
        return meetings.accept(self._ws, meeting_id, expect_rev, proposal)

    def resolve(
        self,
        meeting_id: int,
        expect_rev: int,
        *,
        proposal: int | None = None,
        kind: str | None = None,
        assign: Mapping[str, Sequence[str]] | None = None,
        who: str | None = None,
        note: str = "",
    ) -> Meeting:
        """Resolve with an agreed ``proposal``, or (not a participant) with any plan."""
        how = None if kind is None else How(kind, assign, who, note)
        return meetings.resolve(self._ws, meeting_id, expect_rev, proposal=proposal, how=how)

    def answer(
        self,
        message_id: int,
        *,
        release: bool = False,
        reason: str | None = None,
        eta: float | None = None,
    ) -> Message:
        """Answer a release request: release the claim, or say why not (and when)."""
        return releases.answer(self._ws, message_id, release=release, reason=reason, eta=eta)
