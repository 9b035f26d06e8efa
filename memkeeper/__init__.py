"""memkeeper: safe concurrent edits of shared AI-agent memory files.

from memkeeper import Memory, Conflict
mem = Memory.open(root=".", agent="agent-a")
sec = mem.read("CLAUDE.md#build")
mem.patch("CLAUDE.md#build", "new body\n", expect_rev=sec.rev)
"""

from __future__ import annotations

from memkeeper.errors import Busy, Conflict, Failed, Invalid, MemkeeperError, Refused
from memkeeper.memory import Memory
from memkeeper.records import Event, PatchResult, SectionInfo, SectionText

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.leases import Claim

__all__ = [
    "Busy",
    "Claim",
    "Conflict",
    "Event",
    "Failed",
    "Invalid",
    "MemkeeperError",
    "Memory",
    "PatchResult",
    "Refused",
    "SectionInfo",
    "SectionText",
]


def __getattr__(name: str) -> object:
    """``Claim`` loads the lease core on first use: ``read`` and ``patch`` never need it."""
    if name == "Claim":
        from memkeeper.leases import Claim

        return Claim
    raise AttributeError(f"module 'memkeeper' has no attribute {name!r}")
