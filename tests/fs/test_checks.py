"""A --verify command run for real: exit status, output tail, and a timeout that kills the
whole process group."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper.fs.checks import run_check


@pytest.mark.peer("sh", "/bin/sh", "sleep")
def test_a_command_reports_its_exit_and_the_tail_of_its_output(tmp_path: Path) -> None:
    check = run_check("printf 'a%.0s' $(seq 1 50); echo; exit 4", str(tmp_path), 10, tail_bytes=8)
    assert (check.exit_code, check.passed, check.timed_out) == (4, False, False)
    assert check.tail.startswith("[…]")


@pytest.mark.peer("sh", "/bin/sh", "sleep")
def test_a_command_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    check = run_check("sleep 30 & sleep 30", str(tmp_path), 0.3)
    assert check.timed_out
    assert check.exit_code is None
    assert check.duration_s < 5
