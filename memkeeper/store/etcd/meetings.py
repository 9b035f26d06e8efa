"""Meetings in the etcd store (``keys``: ``P/meet/<id>``, the record as JSON; ids from
``P/seq/meet``; ``P/meetser/<id>`` while meeting ``id`` is ``serializing``: every claims transaction
that changed a claim asks for those, one range, empty but while participants take turns). A read
inside ``writing()`` is compared at the commit, so a read, a compare of its ``rev`` and a put are
one compare-and-swap. Not a mixin of ``EtcdStore``: ``EtcdStore.meetings``, loaded on first use,
through the store's core (its transactions, its raw access to keys)."""

from __future__ import annotations

from memkeeper.store.etcd import keys
from memkeeper.store.etcd.core import EtcdDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.meetings.records import Meeting


class MeetingKeys(EtcdDomain):
    def add_meeting(self, m: Meeting) -> Meeting:
        """Keep a new meeting: ``m`` with the id it was given."""
        result: Meeting = self._core._alone(self._add_meeting, m)
        return result

    def _add_meeting(self, m: Meeting) -> Meeting:
        from dataclasses import replace

        added = replace(m, id=self._core._next_id("meet"))
        self._put_meeting(added)
        return added

    def meeting(self, meeting_id: int) -> Meeting | None:
        raw = self._core._get(self._core._key("meet", keys.number(meeting_id)))
        if raw is None:
            return None
        from memkeeper.meetings.records import decode

        return decode(raw)

    def meetings(self, *, resolved: bool = False) -> list[Meeting]:
        """Open and escalated meetings by id (resolved ones too with ``resolved``)."""
        stored = self._core._scan_prefix(self._core._key("meet", ""))
        if not stored:
            return []
        from memkeeper.meetings.records import decode

        found = [decode(raw) for _, raw in stored]
        return [m for m in found if resolved or m.state != "resolved"]

    def serializing_meetings(self) -> list[Meeting]:
        """The meetings whose participants take turns, by id (each read, so compared at the
        commit of a ``writing()`` block)."""
        found = []
        for key, _ in self._core._scan_prefix(self._core._key("meetser", "")):
            m = self.meeting(keys.number_of(key))
            if m is not None and m.state == "serializing":
                found.append(m)
        return found

    def kept_meetings(self) -> list[tuple[int, float | None]]:
        """The resolved meetings, oldest id first: each id, and when it ended."""
        stored = self._core._scan_prefix(self._core._key("meet", ""))
        if not stored:
            return []
        from memkeeper.meetings.records import decode

        found = [decode(raw) for _, raw in stored]
        return [(m.id, m.ended_at) for m in found if m.state == "resolved"]

    def drop_meetings(self, ids: Sequence[int]) -> None:
        """Forget these meetings (call inside ``writing()``)."""
        for meeting_id in ids:
            self._core._alone(self._core._delete, self._core._key("meet", keys.number(meeting_id)))

    def put_meeting(self, m: Meeting) -> None:
        self._core._alone(self._put_meeting, m)

    def _put_meeting(self, m: Meeting) -> None:
        from memkeeper.meetings.records import encode

        self._core._put(self._core._key("meet", keys.number(m.id)), encode(m).encode())
        turns = self._core._key("meetser", keys.number(m.id))
        if m.state == "serializing":
            self._core._put(turns, b"1")
        elif m.order:  # turns over: out of the index
            self._core._delete(turns)
