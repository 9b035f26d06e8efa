"""Fencing tokens across crashes: processes that claim are SIGKILLed mid-way, and no token is ever
handed out twice or out of order (docs/reference.md §4: strictly increasing across all grants)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper import Memory

LOOP = """
import sys
from memkeeper import Memory
memory = Memory.open(sys.argv[1], agent=sys.argv[2])
while True:
    memory.release(memory.claim(sys.argv[2] + "/", mode="write", ttl=60).id)
"""
ONCE = """
import sys
from memkeeper import Memory
Memory.open(sys.argv[1], agent="doomed").claim("doomed/", mode="write", ttl=60)
"""


def python_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    return {**env, **extra}


def granted_tokens(memory: Memory) -> list[tuple[str, int]]:
    """``(agent, token)`` of every ``claim.granted`` event, in event id order."""
    return [(e.actor, int(e.data["token"])) for e in memory.events() if e.type == "claim.granted"]


def wait_for_grants(memory: Memory, more_than: int, agent: str, timeout: float = 30.0) -> int:
    """Block until the log holds more than ``more_than`` grants, one of them ``agent``'s;
    how many it holds."""
    deadline = time.monotonic() + timeout
    while True:
        grants = granted_tokens(memory)
        if len(grants) > more_than and any(who == agent for who, _ in grants):
            return len(grants)
        assert time.monotonic() < deadline, f"no progress past {more_than} grants"
        time.sleep(0.02)


class Claimers:
    """Worker processes, each claiming and releasing its own path in a loop until killed."""

    def __init__(self, root: Path) -> None:
        self.root, self.started = root, 0
        self.running: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self) -> None:
        self.started += 1
        agent = f"worker-{self.started}"
        argv = [sys.executable, "-c", LOOP, str(self.root), agent]
        self.running.append((agent, subprocess.Popen(argv, env=python_env())))

    def kill_oldest(self, memory: Memory, seen: int) -> int:
        """Once the log has 30 more grants and one of the oldest worker's, SIGKILL it."""
        agent, worker = self.running.pop(0)
        seen = wait_for_grants(memory, seen + 30, agent)
        worker.send_signal(signal.SIGKILL)
        assert worker.wait(30) == -signal.SIGKILL  # it was still claiming: killed mid-way
        return seen


@pytest.fixture
def claimers(memory: Memory, sample: Path) -> Iterator[Claimers]:
    memory.claims()  # the store exists before the workers race to open it
    workers = Claimers(sample)
    try:
        yield workers
    finally:
        for _, worker in workers.running:
            worker.kill()
            worker.wait()


def test_tokens_keep_rising_while_claiming_processes_are_killed_mid_way(
    memory: Memory, claimers: Claimers
) -> None:
    for _ in range(3):
        claimers.start()
    seen = 0
    for _ in range(5):
        seen = claimers.kill_oldest(memory, seen)
        claimers.start()
    while claimers.running:
        seen = claimers.kill_oldest(memory, seen)

    grants = granted_tokens(memory)
    tokens = [token for _, token in grants]
    assert tokens == sorted(set(tokens))  # strictly increasing by event id
    assert len({agent for agent, _ in grants}) == 8  # every worker, killed ones included
    assert memory.claim("after/", mode="write").token > tokens[-1]


def test_a_process_killed_before_its_grant_commits_leaves_no_grant(
    memory: Memory, sample: Path
) -> None:
    first = memory.claim("mine/", mode="write")
    done = crash_claim(sample, "claim.before_commit")

    assert done == -signal.SIGKILL
    assert [agent for agent, _ in granted_tokens(memory)] == ["agent-a"]
    assert memory.claims() == [first]
    assert memory.claim("after/", mode="write").token > first.token


def test_a_process_killed_after_its_grant_commits_keeps_its_token(
    memory: Memory, sample: Path
) -> None:
    first = memory.claim("mine/", mode="write")
    done = crash_claim(sample, "claim.after_commit")

    assert done == -signal.SIGKILL
    grants = granted_tokens(memory)
    assert grants[0] == ("agent-a", first.token)
    assert grants[1][0] == "doomed"
    assert grants[1][1] > first.token
    assert [claim.agent for claim in memory.claims()] == ["agent-a", "doomed"]  # until its TTL
    assert memory.claim("after/", mode="write").token > grants[1][1]


def crash_claim(root: Path, point: str) -> int:
    """Run one claim in a new process that dies by SIGKILL at ``point``; its return code."""
    argv = [sys.executable, "-c", ONCE, str(root)]
    env = python_env(MEMKEEPER_CRASH_AT=point)
    return subprocess.run(argv, env=env, timeout=60, check=False).returncode
