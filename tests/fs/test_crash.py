"""A crash point kills the process only when ``MEMKEEPER_CRASH_AT`` names it (the kill itself,
in a process of its own: tests/e2e/test_fs_processes.py)."""

from __future__ import annotations

import os
import signal

import pytest

from memkeeper.fs import crash


@pytest.mark.parametrize("setting", ["elsewhere", "", None])
def test_a_crashpoint_another_name_or_none_names_does_nothing(
    monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    monkeypatch.setattr(crash, "_CRASH_AT", setting)
    killed: list[int] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append(sig))
    crash.crashpoint("here")
    assert killed == []


def test_the_crashpoint_named_kills_this_process_with_sigkill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(crash, "_CRASH_AT", "here")
    killed: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append((pid, sig)))
    crash.crashpoint("here")
    assert killed == [(os.getpid(), signal.SIGKILL)]
