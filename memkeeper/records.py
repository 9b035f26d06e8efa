"""The values the Python API returns: small immutable records with a JSON form.

These live on the start-up hot path (every ``read`` builds one), so they are NamedTuples
rather than dataclasses: the dataclasses module costs more to import than a whole ``read``.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class SectionInfo(NamedTuple):
    """One section as ``memkeeper sections`` lists it."""

    key: str
    title: str
    level: int
    rev: int
    hash: str
    start_line: int
    end_line: int

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


class SectionText(NamedTuple):
    """What ``read`` returns: the heading, the body ``patch`` replaces, and the revisions."""

    path: str
    key: str | None
    heading: str
    content: str
    rev: int
    hash: str
    file_rev: int
    file_hash: str

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


class PatchResult(NamedTuple):
    """A successful compare-and-swap: the new revisions and any advisory warnings."""

    path: str
    key: str
    rev: int
    hash: str
    file_rev: int
    file_hash: str
    event_id: int
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        payload = self._asdict()
        payload["warnings"] = list(self.warnings)
        return payload


class Event(NamedTuple):
    """One entry of the hash-chained event log (contract §8)."""

    id: int
    ts: str
    actor: str
    type: str
    path: str | None
    section: str | None
    data: dict[str, Any]
    prev: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        return self._asdict()
