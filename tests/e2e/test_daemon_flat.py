"""A daemon that runs for weeks (issue 26): ``memkeeper watch`` under a steady load — an agent's
patch every second, a human's save every two seconds — keeps its CPU per minute and its
memory flat: in the last window of the run, both within 10 % of the first.

Slow (``-m slow``): 30 minutes, 5-minute windows. The length and the window are
``MEMKEEPER_TEST_WATCH_MINUTES`` and ``MEMKEEPER_TEST_WATCH_WINDOW`` (minutes) — for a short
run by hand, say 3 and 1::

    MEMKEEPER_TEST_WATCH_MINUTES=3 MEMKEEPER_TEST_WATCH_WINDOW=1 \\
        .venv/bin/python -m pytest -m slow -n0 -s tests/e2e/test_daemon_flat.py

It prints each sample (minute, CPU seconds so far, RSS), for the closing note.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from memkeeper import Memory
from tests.conftest import MEMKEEPER

MINUTES = float(os.environ.get("MEMKEEPER_TEST_WATCH_MINUTES", "30"))
WINDOW = float(os.environ.get("MEMKEEPER_TEST_WATCH_WINDOW", "5"))
TOLERANCE = 1.10
SAMPLE_S = 5.0
PATCH_S, SAVE_S = 1.0, 2.0


def cpu_s(pid: int) -> float:
    """The process's user + system CPU time so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def started(log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = log.read_text().splitlines() if log.exists() else []
        if any(json.loads(line).get("action") == "started" for line in lines):
            return
        time.sleep(0.1)
    raise AssertionError(f"memkeeper watch did not start: {log.read_text()}")


def save(root: Path, n: int) -> None:
    """A human's save of CLAUDE.md's Testing section, in place, as an editor writes it."""
    path = root / "CLAUDE.md"
    text = path.read_text().split("## Testing\n", 1)
    rest = text[1].split("\n## ", 1)
    path.write_text(f"{text[0]}## Testing\n\nRun the tests (save {n}).\n\n## {rest[1]}")


@pytest.mark.slow
def test_the_daemon_s_cpu_and_memory_stay_flat_under_a_steady_load(sample: Path) -> None:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    log = sample.parent / "watch.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    with log.open("w") as out:
        watch = subprocess.Popen([MEMKEEPER, "watch", "--json"], cwd=sample, env=env, stdout=out)
    memory = Memory.open(sample, agent="agent-a")
    samples: list[tuple[float, float, int]] = []  # (seconds since the start, CPU s, RSS KiB)
    try:
        started(log)
        start = time.monotonic()
        next_patch = next_save = next_sample = start
        n = 0
        while (now := time.monotonic()) < start + MINUTES * 60:
            if now >= next_sample:
                samples.append((now - start, cpu_s(watch.pid), rss_kib(watch.pid)))
                print(f"{samples[-1][0] / 60:6.2f} min  {samples[-1][1]:7.2f} s CPU  "
                      f"{samples[-1][2] / 1024:6.1f} MiB")  # fmt: skip
                next_sample += SAMPLE_S
            if now >= next_patch:
                n += 1
                section = memory.read("AGENTS.md#roster")
                body = f"\nagent-a, patch {n}.\n\n"
                memory.patch("AGENTS.md#roster", body, expect_rev=section.rev)
                next_patch += PATCH_S
            if now >= next_save:
                save(sample, n)
                next_save += SAVE_S
            time.sleep(max(0.0, min(next_patch, next_save, next_sample) - time.monotonic()))
        samples.append((time.monotonic() - start, cpu_s(watch.pid), rss_kib(watch.pid)))
        assert watch.poll() is None, "memkeeper watch exited under load"
    finally:
        memory.close()
        watch.terminate()
        watch.wait(timeout=30)
    first, last = window(samples, 0.0), window(samples, MINUTES - WINDOW)
    print(f"first {WINDOW:g} min: {first[0]:.2f} s CPU/min, {first[1] / 1024:.1f} MiB; "
          f"last: {last[0]:.2f} s CPU/min, {last[1] / 1024:.1f} MiB")  # fmt: skip
    assert last[0] <= first[0] * TOLERANCE, (first, last)
    assert last[1] <= first[1] * TOLERANCE, (first, last)
    errors = [line for line in log.read_text().splitlines() if '"status": "error"' in line]
    assert errors == []


def window(samples: list[tuple[float, float, int]], from_min: float) -> tuple[float, float]:
    """CPU seconds per minute and the median RSS (KiB) over the window from ``from_min``."""
    inside = [s for s in samples if from_min * 60 <= s[0] <= (from_min + WINDOW) * 60]
    assert len(inside) >= 2, samples
    minutes = (inside[-1][0] - inside[0][0]) / 60
    return (inside[-1][1] - inside[0][1]) / minutes, statistics.median(s[2] for s in inside)
