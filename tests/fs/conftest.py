"""What the disk's tests share: a snippet of Python run in a fresh process, for what only a
real process shows (a crash, a lock held elsewhere, a file held open)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
