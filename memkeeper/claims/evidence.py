"""What a claim leaves when it completes or is abandoned (docs/reference.md §4 "Evidence"):
pure records and bounds, no I/O.

``verified`` is what memkeeper found itself — git's head, the files changed since the claim's
base and their diff stat, the memory revisions its holder wrote, the ``--verify`` commands it
ran and their results. ``reported`` is what the caller attached (``--evidence FILE``), kept
as the caller gave it and labelled self-reported: a claim, not evidence, so whoever acts on
it checks again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

TAIL_BYTES = 4096  # of each --verify command's output (stdout and stderr together)
MAX_REPORTED_BYTES = 64 * 1024  # of an --evidence file
MAX_CHANGED = 500  # changed files listed (the count is always whole)
MAX_DIFFSTAT_CHARS = 8192
MAX_CHECKS = 20


@dataclass(frozen=True, slots=True)
class Check:
    """One ``--verify`` command memkeeper ran in the claim's worktree."""

    command: str
    exit_code: int | None  # None: killed at the timeout
    duration_s: float
    tail: str
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "passed": self.passed,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 3),
            "tail": self.tail,
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> Check:
        return cls(v["command"], v["exit_code"], float(v["duration_s"]), v["tail"], v["timed_out"])


@dataclass(frozen=True, slots=True)
class MemoryRev:
    """A section revision the claim's holder wrote while it held the claim (``fenced``: the
    write named this claim with ``--claim``)."""

    path: str
    section: str | None
    rev: int | None
    event: int
    fenced: bool

    def to_json(self) -> dict[str, Any]:
        ref = self.path if self.section is None else f"{self.path}#{self.section}"
        return {"ref": ref, "rev": self.rev, "event": self.event, "fenced": self.fenced}

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> MemoryRev:
        path, _, section = v["ref"].partition("#")
        return cls(path, section or None, v["rev"], int(v["event"]), bool(v["fenced"]))


@dataclass(frozen=True, slots=True)
class Evidence:
    head: str | None
    base: str
    changed: tuple[str, ...]
    changed_count: int
    diffstat: str
    memory: tuple[MemoryRev, ...]
    checks: tuple[Check, ...]
    gathered_at: str
    reported: str | None = None

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if not check.passed)

    def to_json(self) -> dict[str, Any]:
        verified = {
            "head": self.head,
            "base": self.base,
            "changed": list(self.changed),
            "changed_count": self.changed_count,
            "diffstat": self.diffstat,
            "memory": [m.to_json() for m in self.memory],
            "checks": [c.to_json() for c in self.checks],
            "gathered_at": self.gathered_at,
        }
        reported = None
        if self.reported is not None:
            reported = {"self_reported": True, "verified": False, "content": self.reported}
        return {"verified": verified, "reported": reported}

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> Evidence:
        f, reported = v["verified"], v.get("reported")
        return cls(
            f["head"], f["base"], tuple(f["changed"]), int(f["changed_count"]), f["diffstat"],
            tuple(MemoryRev.from_json(m) for m in f["memory"]),
            tuple(Check.from_json(c) for c in f["checks"]), f["gathered_at"],
            None if reported is None else reported["content"],
        )  # fmt: skip


def tail(data: bytes, limit: int = TAIL_BYTES) -> str:
    """The last ``limit`` bytes of an output as text (bytes that are not UTF-8 replaced), with
    a mark where it was cut."""
    if len(data) <= limit:
        return data.decode("utf-8", "replace")
    return "[…]" + data[-limit:].decode("utf-8", "replace")


def bounded_changed(names: list[str]) -> tuple[tuple[str, ...], int]:
    """The first ``MAX_CHANGED`` changed files (sorted) and how many there are."""
    ordered = sorted(set(names))
    return tuple(ordered[:MAX_CHANGED]), len(ordered)


def bounded_diffstat(text: str) -> str:
    if len(text) <= MAX_DIFFSTAT_CHARS:
        return text
    return text[:MAX_DIFFSTAT_CHARS] + "\n[…]"


def reported_text(data: bytes, source: str) -> str:
    """An ``--evidence`` file's bytes as kept: UTF-8, at most ``MAX_REPORTED_BYTES``."""
    from memkeeper.errors import Invalid

    if len(data) > MAX_REPORTED_BYTES:
        raise Invalid(
            f"{source} is {len(data):,} bytes; --evidence keeps at most {MAX_REPORTED_BYTES:,} "
            "— attach a summary and point to the rest"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(f"{source}: not UTF-8 text (byte {exc.start}) — attach JSON or text") from exc
