"""The work queue at two sizes of history: a worker's round — ``work add``, ``work next``,
``work done`` — on a store holding few ended items and on one holding the policy's bound of
them (``work.keep``, 1,000 by default), timed in turn, in this process (the Python API: the
CLI's start-up is the same at both sizes and would hide the difference).

Every operation reads the items not done, never the done ones; ``work add`` also trims the
ended ones every 16th item (``work.keeping``), reading the done items then. The rounds' mean
(the trims amortized over them) at the big size over the small one is what a long-lived queue
costs more.
"""

from __future__ import annotations

import statistics
import time

from bench.scale.files import files_repo
from bench.scale.growth import Growth
from memkeeper import Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _round(memory: Memory, n: int) -> float:
    start = time.perf_counter()
    memory.work.add(f"job {n}", paths=[f"src/m{n % 7}/"])
    item, claim = memory.work.next(ttl=60)
    memory.work.done(item.id, claim=claim.id)
    return time.perf_counter() - start


def _queue(root: Path, ended: int) -> Memory:
    files_repo(root, 0)
    memory = Memory.open(root, agent="bench")
    for n in range(ended):
        _round(memory, n)
    return memory


def run(work: Path, quick: bool) -> list[Growth]:
    small_n, big_n, rounds = (50, 400, 48) if quick else (100, 1000, 96)
    small, big = _queue(work / "small", small_n), _queue(work / "big", big_n)
    times: dict[str, list[float]] = {"small": [], "big": []}
    try:
        for n in range(rounds):
            times["small"].append(_round(small, n))
            times["big"].append(_round(big, n))
    finally:
        small.close()
        big.close()
    ms = {k: statistics.mean(v) * 1000 for k, v in times.items()}
    return [
        Growth(
            "work add + next + done (a round's mean, in process)",
            f"{small_n:,} ended items",
            f"{big_n:,} ended items",
            "ms",
            ms["small"],
            ms["big"],
            ratio_goal=1.5,
        )
    ]
