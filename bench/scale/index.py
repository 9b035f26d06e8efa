"""Issue 26, indexing in bulk: ``init`` of 1,000 and of 10,000 files (20 sections each; with
``--quick`` 100 and 1,000), and the bytes the store keeps per file beyond the files' own.

Both repositories are built first (``files_repo`` without ``init``), and one ``init`` of the
small one, not counted, compiles memkeeper's bytecode; each round then runs
``init`` on the small one and on the big one in turn, each on a fresh memory home (the
previous round's ``.memkeeper/`` removed: ``init`` writes no policy here, the sample has
one), so both see the same noise; the time is the median of the rounds. The store's bytes
are those of ``.memkeeper/state.db`` and its WAL after the last round's ``init``, less the
bytes of the files it indexed (the files ``init --json`` lists with sections), per file.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

from bench.scale.files import files_repo, memkeeper
from bench.scale.growth import Growth

SECTIONS = 20
INIT_RATIO = 3.0  # the goal: 10x the files for at most 3x the time
INIT_LIMIT_S = 30.0  # on a quiet machine, the big repository
BYTES_LIMIT_KB = 5.0  # the store's bytes per file beyond the files' own


def run(work: Path, quick: bool) -> list[Growth]:
    small_n, big_n = (100, 1_000) if quick else (1_000, 10_000)
    rounds = 1 if quick else 3
    cache = work / "pycache"
    roots = {n: files_repo(work / f"files-{n}", n, SECTIONS, init=False) for n in (small_n, big_n)}
    times: dict[int, list[float]] = {small_n: [], big_n: []}
    listed: dict[int, bytes] = {}
    memkeeper(roots[small_n], "init", "--json", cache=cache)  # warm-up: bytecode compiled
    for _ in range(rounds):
        for n, root in roots.items():
            shutil.rmtree(root / ".memkeeper", ignore_errors=True)
            took, listed[n] = memkeeper(root, "init", "--json", cache=cache)
            times[n].append(took)
    extra = {n: extra_kb_per_file(root, listed[n]) for n, root in roots.items()}
    small, big = f"{small_n:,} files", f"{big_n:,} files"
    return [
        Growth(
            f"`init`, {SECTIONS} sections a file",
            small,
            big,
            "s",
            statistics.median(times[small_n]),
            statistics.median(times[big_n]),
            ratio_goal=INIT_RATIO,
            limit=INIT_LIMIT_S,
        ),
        Growth(
            "store after `init`, per file beyond the files' bytes",
            small,
            big,
            "KB",
            extra[small_n],
            extra[big_n],
            limit=BYTES_LIMIT_KB,
        ),
    ]


def extra_kb_per_file(root: Path, listed: bytes) -> float:
    """The store's bytes beyond those of the files it indexed, per indexed file, in KB."""
    indexed: list[str] = [f["path"] for f in json.loads(listed)["files"] if "sections" in f]
    files_bytes = sum((root / rel).stat().st_size for rel in indexed)
    home = root / ".memkeeper"
    store_bytes = sum(
        (home / name).stat().st_size
        for name in ("state.db", "state.db-wal")
        if (home / name).exists()
    )
    return (store_bytes - files_bytes) / len(indexed) / 1000
