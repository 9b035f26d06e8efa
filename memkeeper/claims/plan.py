"""What a claim announces it will do (docs/reference.md §4 "Claim records"): where it works
(branch, worktree, base commit), which memory sections (``FILE#KEY``) it intends to change and
which tests it answers for. Pure: the shell fills in the defaults from git."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memkeeper import limits
from memkeeper.claims.targets import normalize_target
from memkeeper.errors import Invalid

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

MAX_PLAN_ITEMS = 256


@dataclass(frozen=True, slots=True)
class Plan:
    """What a claim says it will do: where (branch, worktree, base commit), which memory
    sections (``FILE#KEY``) it intends to change, which tests it answers for."""

    branch: str = ""
    worktree: str = ""
    base: str = ""
    memory: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "worktree": self.worktree,
            "base": self.base,
            "memory": list(self.memory),
            "tests": list(self.tests),
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> Plan:
        return cls(
            v.get("branch", ""), v.get("worktree", ""), v.get("base", ""),
            tuple(v.get("memory", ())), tuple(v.get("tests", ())),
        )  # fmt: skip


def make_plan(
    branch: str = "",
    worktree: str = "",
    base: str = "",
    memory: Iterable[str] = (),
    tests: Iterable[str] = (),
) -> Plan:
    """A ``Plan`` with its sizes checked and its memory sections normalized; ``Invalid`` (what,
    and what to pass instead) on a bad one."""
    for value, what in ((branch, "--branch"), (worktree, "--worktree"), (base, "--base")):
        limits.text(value, what, limit=limits.MAX_TARGET_CHARS)
    sections, tested = list(memory), list(tests)
    for items, what in ((sections, "--memory"), (tested, "--tests")):
        if len(items) > MAX_PLAN_ITEMS:
            raise Invalid(f"{what} names {len(items)} items; at most {MAX_PLAN_ITEMS}")
        for item in items:
            limits.text(item, what, limit=limits.MAX_TARGET_CHARS)
    for ref in sections:
        if "#" not in ref:
            raise Invalid(
                f"--memory {ref!r} names no section — write FILE#KEY, e.g. CLAUDE.md#build"
            )
    norm = tuple(dict.fromkeys(normalize_target(ref) for ref in sections))
    return Plan(branch, worktree, base, norm, tuple(dict.fromkeys(tested)))
