"""Run a ``--verify`` command of ``complete`` (docs/reference.md §4 "Evidence"): in the claim's
worktree, through the shell, in a process group of its own, with a timeout after which the
whole group is killed; its output (stdout and stderr together) goes to a temporary file, so a
command that prints gigabytes costs disk, not memory, and only the tail is kept.

The commands come from the caller's command line only — never from a file in the repository
or from another agent's record.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable

from memkeeper.claims.evidence import TAIL_BYTES, Check, tail
from memkeeper.errors import Invalid


def run_check(
    command: str,
    cwd: str,
    timeout: float,
    *,
    tail_bytes: int = TAIL_BYTES,
    monotonic: Callable[[], float] = time.monotonic,
) -> Check:
    """Run ``command`` with ``sh -c`` in ``cwd``; its exit status, duration and output tail."""
    if not os.path.isdir(cwd):
        raise Invalid(f"the claim's worktree {cwd} is not a directory — cannot run --verify there")
    with tempfile.TemporaryFile() as out:
        start = monotonic()
        child = subprocess.Popen(
            ["/bin/sh", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        timed_out = False
        try:
            code: int | None = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        duration = monotonic() - start
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)  # what it left running in its group
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - tail_bytes - 1))
        data = out.read()
    text = tail(data, tail_bytes)
    if timed_out:
        text += f"\n[killed after {timeout:g} s: leases.verify_timeout]"
    return Check(command, code, duration, text, timed_out)
