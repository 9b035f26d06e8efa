"""The daemon's look at its files (``daemon.looking``): a rescan of an unchanged tree reads no
file — the stat stamps stand in for the reads, the classes are remembered from the last walk —
and still finds every file that changed, a same-size edit whose mtime was put back included."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.clock import FakeClock
from memkeeper.daemon.step import Daemon
from memkeeper.events import digest
from memkeeper.fs import files
from memkeeper.policy.model import Policy
from tests.daemon.conftest import RESCAN_S

if TYPE_CHECKING:
    from memkeeper import Memory

FILE = "memory/architecture.md"


@pytest.fixture
def clock() -> FakeClock:
    """A minute ahead of the files' times: their stamps are trusted as soon as they are taken."""
    return FakeClock(time.time() + 60)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = files.read_bytes

    def read_bytes(root: str | os.PathLike[str], rel: str, *, whole: bool = False) -> bytes:
        seen.append(rel)
        return real(root, rel, whole=whole)

    monkeypatch.setattr(files, "read_bytes", read_bytes)
    return seen


@pytest.fixture
def classified(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = Policy.classify

    def classify(self: Policy, rel: str) -> object:
        seen.append(rel)
        return real(self, rel)

    monkeypatch.setattr(Policy, "classify", classify)
    return seen


def test_a_rescan_of_an_unchanged_tree_reads_and_classifies_nothing(
    daemon: Daemon, reads: list[str], classified: list[str]
) -> None:
    assert daemon._scan() == []  # the first look after start-up recorded what it read
    reads.clear()
    classified.clear()
    assert daemon._scan() == []
    assert reads == []
    assert classified == []


def test_the_stamps_a_scan_found_are_in_the_store_for_the_next_daemon(
    home: Memory, daemon: Daemon, reads: list[str]
) -> None:
    daemon._scan()
    reads.clear()
    restarted = Daemon(home.workspace, RESCAN_S, quiet_s=0)
    assert restarted._scan() == []
    assert reads == []


def test_a_rescan_indexes_a_same_size_edit_whose_mtime_was_put_back(
    daemon: Daemon, sample: Path, reads: list[str]
) -> None:
    daemon._scan()
    path = sample / FILE
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    reads.clear()
    found = daemon._scan()
    assert reads[0] == FILE  # read: its ctime moved
    assert {o.path for o in found} == {FILE}
    state = daemon.ws.store.file_state(FILE)
    assert state is not None
    assert state.file_hash == digest(bytes(data))


def test_a_policy_reload_classifies_every_file_again(
    daemon: Daemon, sample: Path, classified: list[str]
) -> None:
    policy = sample / ".memkeeper.yaml"
    agents = b"  - path: AGENTS.md\n    class: "
    policy.write_bytes(policy.read_bytes().replace(agents + b"section-owned", agents + b"private"))
    classified.clear()
    daemon._reload()
    assert "AGENTS.md" in classified
    assert "AGENTS.md" not in daemon.known.files  # now private: not listed
