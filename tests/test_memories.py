"""``Memories``: one ``Memory`` per thread for a server's worker threads (the MCP server's
and the dashboard's), each opened once with the agent it was given, all closed together."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from memkeeper.memories import Memories

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from memkeeper.api import Memory


def in_thread(memories: Memories, agent: str | None = None) -> Memory:
    found: list[Memory] = []
    worker = threading.Thread(target=lambda: found.append(memories.get(agent)))
    worker.start()
    worker.join()
    return found[0]


def test_each_thread_has_its_own_memory_kept_for_its_next_calls(sample: Path) -> None:
    memories = Memories(sample, "agent-a")
    here = memories.get()
    assert memories.get() is here
    there = in_thread(memories)
    assert there is not here
    assert {here.agent, there.agent} == {"agent-a"}
    assert here.read("CLAUDE.md#build").rev == there.read("CLAUDE.md#build").rev == 1


def test_the_agent_given_at_first_use_names_it_and_is_asked_only_then(sample: Path) -> None:
    memories = Memories(sample)
    asked: list[str] = []

    def name() -> str:
        asked.append("asked")
        return "mcp:codex"

    assert memories.get(name).agent == "mcp:codex"
    assert memories.get(name).agent == "mcp:codex"
    assert asked == ["asked"]  # the thread's Memory is open: the name is not asked again
    assert in_thread(memories, "other").agent == "other"
    assert Memories(sample, "chosen").get(name).agent == "chosen"  # the holder's agent first


def test_without_an_agent_it_is_the_environments(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMKEEPER_AGENT", "from-env")
    assert Memories(sample).get().agent == "from-env"


def test_close_closes_every_threads_memory(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memories = Memories(sample, "agent-a")
    opened = [memories.get(), in_thread(memories), in_thread(memories)]
    closed: list[int] = []

    def stuck() -> None:
        raise OSError("stuck")

    monkeypatch.setattr(opened[0], "close", lambda: closed.append(0))
    monkeypatch.setattr(opened[1], "close", stuck)
    monkeypatch.setattr(opened[2], "close", lambda: closed.append(2))
    memories.close()
    assert closed == [0, 2]  # one that fails does not keep the others open
