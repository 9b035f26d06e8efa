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

__all__ = [
    "Busy",
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
