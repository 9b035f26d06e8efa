"""memkeeper: safe concurrent edits of shared AI-agent memory files.

from memkeeper import Memory, Conflict
mem = Memory.open(root=".", agent="agent-a")
sec = mem.read("CLAUDE.md#build")
mem.patch("CLAUDE.md#build", "new body\n", expect_rev=sec.rev)
"""

from __future__ import annotations

from memkeeper.api import Memory
from memkeeper.errors import Busy, Conflict, Failed, Invalid, MemkeeperError, Refused
from memkeeper.records import Event, PatchResult, SectionInfo, SectionText

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.claims.decisions import Claim
    from memkeeper.coordination import Reconciliation
    from memkeeper.ops.append import AppendResult
    from memkeeper.ops.regen import RegenResult

__all__ = [
    "AppendResult",
    "Busy",
    "Claim",
    "Conflict",
    "Event",
    "Failed",
    "Invalid",
    "MemkeeperError",
    "Memory",
    "PatchResult",
    "Reconciliation",
    "Refused",
    "RegenResult",
    "SectionInfo",
    "SectionText",
]


# Records of the other features load on first use: ``read`` and ``patch`` never need them.
_LAZY = {
    "AppendResult": "memkeeper.ops.append",
    "Claim": "memkeeper.claims.decisions",
    "Reconciliation": "memkeeper.coordination",
    "RegenResult": "memkeeper.ops.regen",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'memkeeper' has no attribute {name!r}")
