"""The values the Python API returns: small immutable records with a JSON form.

They sit on the start-up hot path (every ``read`` builds one), so they are hand-written
slotted classes rather than dataclasses or ``typing.NamedTuple``: importing either costs
more than a whole ``read`` does. ``Record`` gives them what a NamedTuple would: equality,
``repr``, iteration, ``_asdict`` and ``_replace``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, NoReturn, Self


class Record:
    """An immutable record whose fields are its ``__slots__``, in order."""

    __slots__: tuple[str, ...] = ()

    def _fill(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; use _replace()")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values())

    def __getitem__(self, index: int | slice) -> Any:
        return self._values()[index]

    def __len__(self) -> int:
        return len(self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # records may hold dicts

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def _asdict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def _replace(self, **changes: Any) -> Self:
        merged = {**self._asdict(), **changes}
        clone = object.__new__(type(self))
        clone._fill(*(merged[name] for name in self.__slots__))
        return clone

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


class SectionInfo(Record):
    """One section as ``memkeeper sections`` lists it."""

    __slots__ = ("key", "title", "level", "rev", "hash", "start_line", "end_line")
    key: str
    title: str
    level: int
    rev: int
    hash: str
    start_line: int
    end_line: int

    def __init__(
        self, key: str, title: str, level: int, rev: int, hash: str, start_line: int, end_line: int
    ) -> None:
        self._fill(key, title, level, rev, hash, start_line, end_line)


class SectionText(Record):
    """What ``read`` returns: the heading, the body ``patch`` replaces, and the revisions."""

    __slots__ = ("path", "key", "heading", "content", "rev", "hash", "file_rev", "file_hash")
    path: str
    key: str | None
    heading: str
    content: str
    rev: int
    hash: str
    file_rev: int
    file_hash: str

    def __init__(
        self,
        path: str,
        key: str | None,
        heading: str,
        content: str,
        rev: int,
        hash: str,
        file_rev: int,
        file_hash: str,
    ) -> None:
        self._fill(path, key, heading, content, rev, hash, file_rev, file_hash)


class PatchResult(Record):
    """A successful compare-and-swap: the new revisions and any advisory warnings."""

    __slots__ = ("path", "key", "rev", "hash", "file_rev", "file_hash", "event_id", "warnings")
    path: str
    key: str
    rev: int
    hash: str
    file_rev: int
    file_hash: str
    event_id: int
    warnings: tuple[str, ...]

    def __init__(
        self,
        path: str,
        key: str,
        rev: int,
        hash: str,
        file_rev: int,
        file_hash: str,
        event_id: int,
        warnings: tuple[str, ...] = (),
    ) -> None:
        self._fill(path, key, rev, hash, file_rev, file_hash, event_id, warnings)

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "warnings": list(self.warnings)}


class Event(Record):
    """One entry of the hash-chained event log (contract §8)."""

    __slots__ = ("id", "ts", "actor", "type", "path", "section", "data", "prev", "hash")
    id: int
    ts: str
    actor: str
    type: str
    path: str | None
    section: str | None
    data: dict[str, Any]
    prev: str
    hash: str

    def __init__(
        self,
        id: int,
        ts: str,
        actor: str,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        prev: str,
        hash: str,
    ) -> None:
        self._fill(id, ts, actor, type, path, section, data, prev, hash)
