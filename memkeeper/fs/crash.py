"""Crash points: named places on the write paths where a test makes the process die, to show
that a crash there leaves old or new bytes and no lost update (tests/e2e/test_crash.py)."""

from __future__ import annotations

import os

from memkeeper.names import CRASH_ENV

_CRASH_AT = os.environ.get(CRASH_ENV)  # read once: a lookup per point costs on the hot path


def crashpoint(name: str) -> None:
    """Die by SIGKILL here when the test-only ``MEMKEEPER_CRASH_AT`` names this point."""
    if name == _CRASH_AT:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
