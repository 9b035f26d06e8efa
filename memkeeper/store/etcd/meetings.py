"""Meetings in the etcd store (``keys``: ``P/meet/<id>``, the record as JSON; ids from
``P/seq/meet``). A read inside ``writing()`` is compared at the commit, so a read, a compare
of its ``rev`` and a put are one compare-and-swap. A mixin of ``EtcdStore``."""

from __future__ import annotations

from dataclasses import replace

from memkeeper.meetings.records import Meeting, decode, encode
from memkeeper.store.etcd import keys
from memkeeper.store.etcd.core import EtcdCore


class MeetingKeys(EtcdCore):
    def add_meeting(self, m: Meeting) -> Meeting:
        """Keep a new meeting: ``m`` with the id it was given."""
        result: Meeting = self._alone(self._add_meeting, m)
        return result

    def _add_meeting(self, m: Meeting) -> Meeting:
        added = replace(m, id=self._next_id("meet"))
        self._put_meeting(added)
        return added

    def meeting(self, meeting_id: int) -> Meeting | None:
        raw = self._get(self._key("meet", keys.number(meeting_id)))
        return None if raw is None else decode(raw)

    def meetings(self, *, resolved: bool = False) -> list[Meeting]:
        """Open and escalated meetings by id (resolved ones too with ``resolved``)."""
        found = [decode(raw) for _, raw in self._scan_prefix(self._key("meet", ""))]
        return [m for m in found if resolved or m.state != "resolved"]

    def put_meeting(self, m: Meeting) -> None:
        self._alone(self._put_meeting, m)

    def _put_meeting(self, m: Meeting) -> None:
        self._put(self._key("meet", keys.number(m.id)), encode(m).encode())
