"""One exception root whose subclasses map one to one onto the exit codes (docs/reference.md §6).

Every error carries the fields of its JSON payload, so the CLI boundary can print it with
``to_json()`` and the Python API can read the same facts as attributes. The constructors
name the fields each kind must carry: a ``Conflict`` cannot be raised without ``current``
and ``recover``, a ``Refused`` without its ``reason``, a ``Failed`` without ``violations``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Literal, Protocol

    from memkeeper.records import SectionText, Violation

    ConflictReason = Literal["stale_revision", "stale_file_hash", "hook_changed"]
    RefusalReason = Literal[
        "unmanaged",
        "class",
        "structure",
        "owner",
        "claimed",
        "not_holder",
        "policy",
        "diverged",
        "identity",
        "legacy_exists",
    ]

    class AsJson(Protocol):
        """A record a conflict reports as it is now (a section, a claim's record)."""

        def to_json(self) -> dict[str, Any]: ...

    BusyReason = Literal["held", "queued", "timeout", "deadlock", "expired", "abandoned"]


class MemkeeperError(Exception):
    """Base of every error memkeeper raises on purpose."""

    exit_code = 1
    status = "error"
    reason: str | None = None  # a closed word saying why, where docs/reference.md §6 names one

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields
        for name, value in fields.items():
            setattr(self, name, value)

    def to_json(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"status": self.status, "message": self.message}
        for name, value in self.fields.items():
            payload[name] = _json(value)
        return payload


def _json(value: Any) -> Any:
    """A field as JSON: records by their ``to_json``, lists of them item by item."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    return value


class EnvironmentFailure(MemkeeperError):
    """Exit 1: the machine, not the input, failed (disk, SQLite, a filesystem we cannot trust)."""


class Invalid(MemkeeperError):
    """Exit 2: usage or bad input; nothing was changed."""

    exit_code = 2
    status = "invalid"
    candidates: Sequence[str] = ()  # for an unknown or ambiguous reference


class Usage(Invalid):
    """Exit 2: a command line that cannot be read; the message is a whole line naming the
    command (``memkeeper patch: … — see memkeeper patch --help``)."""


class PolicyInvalid(Invalid):
    """Exit 2: the policy file is wrong at ``path:line:column``; ``problem`` says what and
    ``fix`` what to do (``check`` reports the two apart)."""

    path: str
    line: int
    column: int

    def __init__(self, path: str, line: int, column: int, problem: str, fix: str) -> None:
        message = f"{path}:{line}:{column}: {problem} — {fix}"
        super().__init__(message, path=path, line=line, column=column)
        self.problem = problem
        self.fix = fix


class Conflict(MemkeeperError):
    """Exit 3: a compare-and-swap lost; ``current`` holds what is there now."""

    exit_code = 3
    status = "conflict"
    reason: ConflictReason
    current: SectionText  # the section as it is now (a claim's conflict: its record, as JSON)
    expected: dict[str, Any]
    retryable: bool
    recover: str

    def __init__(
        self,
        message: str,
        *,
        reason: ConflictReason,
        expected: dict[str, Any],
        current: SectionText | AsJson,
        recover: str,
        retryable: bool = True,
        **fields: Any,
    ) -> None:
        super().__init__(
            message,
            reason=reason,
            expected=expected,
            current=current,
            retryable=retryable,
            recover=recover,
            **fields,
        )


class Refused(MemkeeperError):
    """Exit 4: the policy, a strict claim or the file's class forbids the write."""

    exit_code = 4
    status = "refused"
    reason: RefusalReason
    holders: Sequence[dict[str, Any]] = ()  # for reason "claimed": whose claim stands in the way

    def __init__(self, message: str, *, reason: RefusalReason, **fields: Any) -> None:
        super().__init__(message, reason=reason, **fields)


class Busy(MemkeeperError):
    """Exit 5: a claim was not granted (``holders``) or was aborted (``reason``)."""

    exit_code = 5
    status = "busy"
    reason: BusyReason
    holders: Sequence[dict[str, Any]]

    def __init__(
        self,
        message: str,
        *,
        reason: BusyReason,
        holders: Sequence[dict[str, Any]],
        **fields: Any,
    ) -> None:
        super().__init__(message, reason=reason, holders=holders, **fields)


class Failed(MemkeeperError):
    """Exit 6: ``check`` or ``verify`` found ``violations``."""

    exit_code = 6
    status = "failed"
    violations: Sequence[Violation]

    def __init__(self, message: str, *, violations: Sequence[Violation], **fields: Any) -> None:
        super().__init__(message, violations=violations, **fields)
