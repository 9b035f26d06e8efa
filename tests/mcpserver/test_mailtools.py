"""``memory_send`` as a plain function, on both stores: the CLI's JSON, sent as the caller's
identity (there is no argument to name another), its ``about`` checked; and ``memory_inbox``
acknowledges."""

from __future__ import annotations

import itertools
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import Memory
from memkeeper.mcpserver import mailtools, tools
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from pathlib import Path

A, B = "claude-code:s1", "codex:t2"
EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
_prefixes = itertools.count(1)


@pytest.mark.parametrize("kind", STORES)
def test_send_then_inbox_and_ack_through_the_tools(
    sample: Path, kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "etcd":
        cluster: Cluster = request.getfixturevalue("cluster")
        for name, value in cluster.store_env(f"mailtools{next(_prefixes)}").items():
            monkeypatch.setenv(name, value)
    a, b = Memory.open(sample, A), Memory.open(sample, B)
    try:
        sent = send_to_b(a)
        assert (sent["sender"], sent["to"], sent["about"]) == (A, B, "CLAUDE.md#build")
        listed = tools.inbox(b, [])
        assert [m["id"] for m in listed["messages"]] == [sent["id"]]
        assert tools.inbox(b, [sent["id"]])["messages"] == []
        refused = tools.answer(lambda: mailtools.send(a, B, "x", "c404"))
        assert refused["status"] == "invalid"
    finally:
        a.close()
        b.close()


def send_to_b(memory: Memory) -> dict[str, Any]:
    answer = mailtools.send(memory, B, "the build moved", "CLAUDE.md#build")
    message: dict[str, Any] = answer["message"]
    return message


def test_inbox_wait_answers_what_waits_and_stops_once_cancelled(sample: Path) -> None:
    a, b = Memory.open(sample, A), Memory.open(sample, B)
    try:
        sent = send_to_b(a)
        assert [m["id"] for m in mailtools.waited(b, 30)["messages"]] == [sent["id"]]
        tools.inbox(b, [sent["id"]])
        cancel = threading.Event()
        cancel.set()
        started = time.monotonic()
        assert mailtools.waited(b, 30, cancel)["messages"] == []
        assert time.monotonic() - started < 5
    finally:
        a.close()
        b.close()
