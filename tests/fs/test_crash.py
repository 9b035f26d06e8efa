"""A crash point kills the process only when ``MEMKEEPER_CRASH_AT`` names it."""

from __future__ import annotations

import pytest

from tests.fs.conftest import run_python

CRASH = """
    from memkeeper.fs import crash
    crash.crashpoint("here")
    print("survived")
"""


def test_crashpoint_kills_the_process_when_named() -> None:
    done = run_python(CRASH, MEMKEEPER_CRASH_AT="here")
    assert done.returncode == -9
    assert "survived" not in done.stdout


@pytest.mark.parametrize("setting", ["elsewhere", ""])
def test_crashpoint_does_nothing_for_another_name(setting: str) -> None:
    done = run_python(CRASH, MEMKEEPER_CRASH_AT=setting)
    assert (done.returncode, done.stdout) == (0, "survived\n")
