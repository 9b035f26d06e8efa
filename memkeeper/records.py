"""Small immutable records: the values the Python API returns (with a JSON form) and the
rows the state store keeps (a file's revision, a section's index row). The records of
coordination between agents (claims, proposals, reconciliations) are in ``coordination``.

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


_set = object.__setattr__  # (a record's own refuses: immutable)


class Record:
    """An immutable record whose fields are its ``__slots__``, in order."""

    __slots__: tuple[str, ...] = ()

    def _fill(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; use _replace()")

    def __delattr__(self, name: str) -> NoReturn:
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
        unknown = set(changes) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(unknown))}")
        merged = {**self._asdict(), **changes}
        clone = object.__new__(type(self))
        clone._fill(*(merged[name] for name in self.__slots__))
        return clone

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


class Value(Record):
    """A ``Record`` that is hashable (set members, dict keys): its fields must be too."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # Record's is None
        return hash((type(self), self._values()))


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

    __slots__ = (
        "path", "key", "heading", "content", "rev", "hash", "file_rev", "file_hash", "stale"
    )  # fmt: skip
    path: str
    key: str | None
    heading: str
    content: str
    rev: int
    hash: str
    file_rev: int
    file_hash: str
    stale: bool  # a shared store that did not answer: the local file's text, unchecked

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
        stale: bool = False,
    ) -> None:
        self._fill(path, key, heading, content, rev, hash, file_rev, file_hash, stale)

    def to_json(self) -> dict[str, Any]:
        out = self._asdict()
        if not self.stale:
            del out["stale"]
        return out


class PatchResult(Record):
    """A successful compare-and-swap: the new revisions and any advisory warnings; with
    ``base_rev``, a stale patch merged into the body written since that rev."""

    __slots__ = (
        "path",
        "key",
        "rev",
        "hash",
        "file_rev",
        "file_hash",
        "event_id",
        "warnings",
        "base_rev",
    )
    path: str
    key: str
    rev: int
    hash: str
    file_rev: int
    file_hash: str
    event_id: int
    warnings: tuple[str, ...]
    base_rev: int | None

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
        base_rev: int | None = None,
    ) -> None:
        self._fill(path, key, rev, hash, file_rev, file_hash, event_id, warnings, base_rev)

    @property
    def merged(self) -> bool:
        """Whether this was a stale patch merged into the current body (``patch --merge``)."""
        return self.base_rev is not None

    def to_json(self) -> dict[str, Any]:
        out = {**self._asdict(), "warnings": list(self.warnings)}
        del out["base_rev"]
        if self.base_rev is not None:
            out.update(merged=True, base_rev=self.base_rev)
        return out


class Event(Record):
    """One entry of the hash-chained event log (docs/reference.md §8): its chained fields, up
    to ``hash``, and who signed that hash — ``signer`` (a public key, ``ed25519:…``) and
    ``sig`` — or None, None (written without a key)."""

    __slots__ = (
        "id", "ts", "actor", "type", "path", "section", "data", "prev", "hash", "signer", "sig"
    )  # fmt: skip
    id: int
    ts: str
    actor: str
    type: str
    path: str | None
    section: str | None
    data: dict[str, Any]
    prev: str
    hash: str
    signer: str | None
    sig: str | None

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
        signer: str | None = None,
        sig: str | None = None,
    ) -> None:
        self._fill(id, ts, actor, type, path, section, data, prev, hash, signer, sig)


class Verdict(Record):
    """The policy's word on one file (and section): its class (``None``: unmanaged), whether
    writes under claims are strict, and who may patch the section (``None``: anyone)."""

    __slots__ = ("file_class", "strict", "owners")
    file_class: str | None
    strict: bool
    owners: tuple[str, ...] | None

    def __init__(
        self, file_class: str | None, strict: bool, owners: tuple[str, ...] | None
    ) -> None:
        self._fill(file_class, strict, owners)

    def to_json(self) -> dict[str, Any]:
        owners = None if self.owners is None else list(self.owners)
        return {"class": self.file_class, "strict": self.strict, "owners": owners}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        owners = data.get("owners")
        owned = None if owners is None else tuple(owners)
        return cls(data.get("class"), bool(data.get("strict")), owned)


class Violation(Record):
    """One thing ``check`` or ``verify`` found wrong: where, which rule, and what to do."""

    __slots__ = ("path", "line", "rule", "message", "fix")
    path: str | None
    line: int | None
    rule: str
    message: str
    fix: str

    def __init__(
        self, path: str | None, line: int | None, rule: str, message: str, fix: str
    ) -> None:
        self._fill(path, line, rule, message, fix)


class FileState(Record):
    """A file's revision and hash as the index last saw it."""

    __slots__ = ("file_rev", "file_hash")
    file_rev: int
    file_hash: str

    def __init__(self, file_rev: int, file_hash: str) -> None:
        self._fill(file_rev, file_hash)


class SectionRow(Record):
    """What the index holds for one section of one file."""

    __slots__ = (
        "key",
        "ord",
        "rev",
        "hash",
        "present",
        "title",
        "level",
        "base",
        "heading",
        "body",
        "lines",
    )
    key: str
    ord: int
    rev: int
    hash: str | None
    present: bool
    title: str
    level: int
    base: str
    heading: bytes
    body: bytes
    lines: int

    def __init__(
        self,
        key: str,
        ord: int,
        rev: int,
        hash: str | None,
        present: bool,
        title: str,
        level: int,
        base: str,
        heading: bytes,
        body: bytes,
        lines: int,
    ) -> None:
        # Field by field, not ``_fill``'s loop: a file's every row is built at each look at
        # it (10,000 sections: 10 ms here against 29 ms).
        _set(self, "key", key)
        _set(self, "ord", ord)
        _set(self, "rev", rev)
        _set(self, "hash", hash)
        _set(self, "present", present)
        _set(self, "title", title)
        _set(self, "level", level)
        _set(self, "base", base)
        _set(self, "heading", heading)
        _set(self, "body", body)
        _set(self, "lines", lines)


class PendingWrite(Record):
    """A file replace the store committed before it happened on disk (the store is the
    write-ahead log of the files): what the file was (``old_*``; ``None``: the write created
    it) and what the replace put there (the temp file's inode, the new bytes' hash), so the
    next look at the file can tell a replace that never happened from someone's edit."""

    __slots__ = (
        "seq", "path", "old_inode", "old_mtime_ns", "old_size", "old_hash",
        "new_inode", "new_hash", "temp", "at",
    )  # fmt: skip
    seq: int
    path: str
    old_inode: int | None
    old_mtime_ns: int | None
    old_size: int | None
    old_hash: str | None
    new_inode: int
    new_hash: str
    temp: str  # the temp file's name, beside the file, until the rename
    at: float

    def __init__(
        self,
        seq: int,
        path: str,
        old_inode: int | None,
        old_mtime_ns: int | None,
        old_size: int | None,
        old_hash: str | None,
        new_inode: int,
        new_hash: str,
        temp: str,
        at: float,
    ) -> None:
        self._fill(
            *(seq, path, old_inode, old_mtime_ns, old_size, old_hash),
            *(new_inode, new_hash, temp, at),
        )

    def replaced(self, identity: tuple[int, int, int], file_hash: str) -> bool:
        """Whether a file with this identity (inode, mtime, size) and hash is the very file
        this write was to replace, untouched since."""
        old = (self.old_inode, self.old_mtime_ns, self.old_size)
        return old == identity and self.old_hash == file_hash
