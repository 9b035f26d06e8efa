"""Benchmark ``work next`` + ``work done`` against ``claim`` + ``release``, in one run.

    .venv/bin/python -m bench.work [--pairs 50] [--rounds 15] [--json]

In-process, as ``bench.claims`` measures claims: one ``Memory`` on a temp copy of
sample-repo (the local SQLite store; with ``MEMKEEPER_STORE`` set, that store), batches of
each side in turn so both see the same noise, each pair timed alone. A work pair is
``Memory.work.next(ttl=30)`` — one transaction that reads every item and the claims, picks
the ready item, grants its claim and marks it claimed — then ``Memory.work.done(id,
claim=cid)``: a settling read of the item, the evidence (no ``--verify``), and one
transaction completing the claim and the item. Before each batch (untimed) as many items are
added as the batch takes, each on a path of its own, so the queue holds every item done so
far: the figure includes reading them all. Fencing tokens must keep rising on both sides.
beads' ``bd ready`` + claim is not beside them: see bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench import machine
from bench.fixture import make_repo
from bench.sides import memkeeper_pair
from bench.stats import interleave, summarize
from memkeeper import Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


class Batch:
    """``count`` pairs of one side, each timed; its tokens must keep rising."""

    def __init__(self, name: str, pair: Callable[[], int], count: int) -> None:
        self.name, self.pair, self.count, self.last = name, pair, count, 0
        self.before: Callable[[int], None] = lambda n: None

    def __call__(self) -> list[float]:
        self.before(self.count)
        took = []
        for _ in range(self.count):
            start = time.perf_counter()
            token = self.pair()
            took.append(time.perf_counter() - start)
            if token <= self.last:
                raise RuntimeError(f"{self.name}: token {token} after {self.last}")
            self.last = token
        return took


def work_batch(memory: Memory, count: int) -> Batch:
    added = 0

    def add(n: int) -> None:
        nonlocal added
        for _ in range(n):
            added += 1
            memory.work.add(f"item {added}", paths=[f"src/work/{added}/"])

    def pair() -> int:
        item, claim = memory.work.next(ttl=30)
        memory.work.done(item.id, claim=claim.id)
        return claim.token

    batch = Batch("work next + work done", pair, count)
    batch.before = add
    return batch


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-work-", dir=args.dir))
    try:
        memory = Memory.open(make_repo(work, as_is=False).root, agent="bench")
        try:
            claims = memkeeper_pair(memory)
            steps = [
                Batch("claim + release", claims.pair, args.pairs),
                work_batch(memory, args.pairs),
            ]
            samples = interleave(steps, args.rounds)
            items = len(memory.work.list())
        finally:
            memory.close()
        facts = machine.describe(str(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for step, kept in zip(steps, samples, strict=True):
        s = summarize(kept)
        rows.append({"side": step.name, "pairs_per_s": 1 / s.median, "median_ms": s.median * 1e3,
                     "p90_ms": s.p90 * 1e3, "n": s.n})  # fmt: skip
    return {"machine": facts, "command": _command(args), "rows": rows, "items_at_end": items}


def report(result: dict[str, Any]) -> str:
    lines = [f"`{result['command']}` — in-process, SQLite (WAL)", ""]
    lines += ["| pair | pairs/s (median) | median | p90 | n |", "| --- | --- | --- | --- | --- |"]
    for r in result["rows"]:
        lines.append(
            f"| {r['side']} | {r['pairs_per_s']:.0f} | {r['median_ms']:.2f} ms "
            f"| {r['p90_ms']:.2f} ms | {r['n']} |"
        )
    claim, work = (r["pairs_per_s"] for r in result["rows"])
    lines += ["", f"a work pair takes {claim / work:.1f} times a claim pair's time; the queue "
              f"held {result['items_at_end']} items at the end"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _command(args: argparse.Namespace) -> str:
    return f"python -m bench.work --pairs {args.pairs} --rounds {args.rounds}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.work", description=__doc__)
    parser.add_argument("--pairs", type=int, default=50, help="pairs per side per round (50)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds, after 3 warm-up (15)")
    parser.add_argument("--dir", default=None, help="where the temp dir goes")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    result = measure(args)
    print(json.dumps(result, default=str) if args.json else report(result), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
