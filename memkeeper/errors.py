"""One exception root whose subclasses map one to one onto the contract's exit codes.

Every error carries the fields of its JSON payload, so the CLI boundary can print it with
``to_json()`` and the Python API can read the same facts as attributes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from memkeeper.records import SectionText


class MemkeeperError(Exception):
    """Base of every error memkeeper raises on purpose."""

    exit_code = 1
    status = "error"
    reason: str | None = None  # a closed word saying why, where the contract names one

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields
        for name, value in fields.items():
            setattr(self, name, value)

    def to_json(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"status": self.status, "message": self.message}
        for name, value in self.fields.items():
            payload[name] = value.to_json() if hasattr(value, "to_json") else value
        return payload


class EnvironmentFailure(MemkeeperError):
    """Exit 1: the machine, not the input, failed (disk, SQLite, a filesystem we cannot trust)."""


class Invalid(MemkeeperError):
    """Exit 2: usage or bad input; nothing was changed."""

    exit_code = 2
    status = "invalid"
    candidates: Sequence[str] = ()  # for an unknown or ambiguous reference


class Conflict(MemkeeperError):
    """Exit 3: a compare-and-swap lost; ``current`` holds what is there now."""

    exit_code = 3
    status = "conflict"
    current: SectionText
    expected: dict[str, Any]
    retryable: bool = True
    recover: str = ""


class Refused(MemkeeperError):
    """Exit 4: the policy, a strict claim or the file's class forbids the write."""

    exit_code = 4
    status = "refused"
    holders: Sequence[dict[str, Any]] = ()  # for reason "claimed": whose claim stands in the way


class Busy(MemkeeperError):
    """Exit 5: a claim was not granted (``holders``) or was aborted (``reason``)."""

    exit_code = 5
    status = "busy"
    holders: Sequence[dict[str, Any]] = ()


class Failed(MemkeeperError):
    """Exit 6: ``check`` or ``verify`` found ``violations``."""

    exit_code = 6
    status = "failed"
    violations: Sequence[dict[str, Any]] = ()
