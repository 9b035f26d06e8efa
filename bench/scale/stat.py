"""Issue 26, stat stamps: ``check``, ``verify`` and ``status`` on an unchanged repository of
1,000 and of 10,000 files, and the daemon's rescan of it, which read only the files whose stat
stamp moved (``memkeeper.ops.stamping``).

    .venv/bin/python -m bench.scale --only stat [--quick]

Each repository is ``bench.scale.files``' (sample-repo plus N files of 20 sections, ``init``),
then each command runs once to record its stamps — a file's stamp is trusted once its last
change is ``RACY_MARGIN_NS`` old, so the run waits for that first. Then, for ``ROUNDS``
rounds, each measure is timed on the small and on the big repository in turn: a CLI command
in a subprocess (start-up included), the rescan in this process (``Daemon._scan``: the
``lstat`` walk, the stamps, the reads of what moved — nothing here). Medians. The ``--full``
rows read every file: what the same command cost before stamps. Two floors are timed in the
same turns, to read the others by on a loaded machine: ``python -c pass`` (what any command
costs before it does anything) and a bare ``lstat`` walk of the tree in this process (what a
rescan cannot go below; the issue measured 0.06 s at 10,000 files).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.scale.files import files_repo, memkeeper
from bench.scale.growth import Growth
from memkeeper.stamps import RACY_MARGIN_NS

SIZES = (1_000, 10_000)
QUICK_SIZES = (100, 1_000)
ROUNDS, QUICK_ROUNDS = 3, 1
COMMANDS: tuple[tuple[str, ...], ...] = (("status",), ("verify",), ("check",))
LIMIT_S = 1.0  # the bound on each command at the big size
RESCAN_LIMIT_S = 0.3
PASS = "floor: `python -c pass`"
WALK = "floor: an lstat walk of the tree"


def run(work: Path, quick: bool) -> list[Growth]:
    sizes = QUICK_SIZES if quick else SIZES
    rounds = QUICK_ROUNDS if quick else ROUNDS
    roots = [files_repo(work / f"files-{n}", n) for n in sizes]
    for root in roots:
        _settled(root)
        for command in COMMANDS:  # the first look records the stamps
            memkeeper(root, *command, "--json")
    scans = [_Rescan(root) for root in roots]
    times: dict[str, list[list[float]]] = {}
    for _ in range(rounds):
        for command in [*COMMANDS, *((*c, "--full") for c in COMMANDS)]:
            row = times.setdefault(" ".join(command), [[], []])
            for side, root in enumerate(roots):
                row[side].append(memkeeper(root, *command, "--json")[0])
        row = times.setdefault("daemon rescan", [[], []])
        for side, scan in enumerate(scans):
            row[side].append(scan.timed())
        for name, timed in ((PASS, _python_pass), (WALK, _lstat_walk)):
            row = times.setdefault(name, [[], []])
            for side, root in enumerate(roots):
                row[side].append(timed(root))
    small, big = (f"{n:,} files" for n in sizes)
    out = []
    for measure, (at_small, at_big) in times.items():
        limit = RESCAN_LIMIT_S if measure == "daemon rescan" else LIMIT_S
        bounded = measure not in (PASS, WALK) and not measure.endswith("--full")
        out.append(
            Growth(
                measure if measure in (PASS, WALK) else f"`{measure}`, unchanged",
                small,
                big,
                "s",
                statistics.median(at_small),
                statistics.median(at_big),
                limit=limit if bounded and not quick else None,
            )
        )
    return out


def _settled(root: Path) -> None:
    """Wait until every file's last change is old enough for its stamp to be trusted."""
    newest = max(
        max(os.lstat(os.path.join(top, name)).st_ctime_ns for name in names)
        for top, _, names in os.walk(root)
        if names and ".git" not in top
    )
    wait = (newest + RACY_MARGIN_NS) / 1e9 - time.time() + 0.1
    if wait > 0:
        time.sleep(wait)


class _Rescan:
    """The daemon of one repository, in this process: its first scan records the stamps."""

    def __init__(self, root: Path) -> None:
        from memkeeper import Memory
        from memkeeper.daemon.step import Daemon

        self.daemon = Daemon(Memory(root, "bench").workspace, 30.0)
        self.daemon._scan()

    def timed(self) -> float:
        start = time.perf_counter()
        done = self.daemon._scan()
        took = time.perf_counter() - start
        assert not done, f"an unchanged tree's rescan did something: {done}"
        return took


def _python_pass(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=root, check=True)
    return time.perf_counter() - start


def _lstat_walk(root: Path) -> float:
    start = time.perf_counter()
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".memkeeper")]
        for name in names:
            os.lstat(os.path.join(top, name))
    return time.perf_counter() - start
