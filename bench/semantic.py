"""What comparing claims by meaning costs: ``claim`` + ``release`` on the command line with the
``semantic`` extra and without, against the code before it; the model's load and one embedding.

    .venv/bin/python -m bench.semantic [--rounds 15] [--base REV]

Four setups, each in its own initialised copy of ``sample-repo/`` where another agent holds a
claim with an objective; in each round every setup runs, in turn, one ``claim src/x/
--objective …`` then one ``release`` of it (two processes, timed together):

- ``base``: the code of ``--base`` (default: the commit this branch started from), which
  compares no objectives (its ``memkeeper/`` unpacked with ``git archive``, first on the path);
- ``no extra``: this code with the extra hidden (``sys.modules['wordllama'] = None``, what
  ``importlib`` then reports as not installed);
- ``extra, no objective``: this code, the extra installed, a claim without objective;
- ``extra, compared``: this code, the extra installed, a claim whose objective is compared (the
  model loads in that process).

Every process starts the same way (``python -c`` calling ``cli.main``), so the differences are
the code's. Then, in this process: the model's load (first call), one short objective's
embedding, and the scores of 100 live claims' objectives.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.fixture import sample_copy
from bench.stats import interleave, summarize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

REPO = Path(__file__).resolve().parent.parent
HIDE = "import sys; sys.modules['wordllama'] = None\n"
MAIN = "import sys\nfrom memkeeper.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
HELD = "fix retry backoff in the http client"
ASKED = "make request timeouts configurable in the fetcher"


class Setup:
    """One copy of the sample, one way of starting memkeeper."""

    def __init__(self, root: Path, prelude: str, path: str | None, objective: str) -> None:
        self.root, self.code, self.objective = root, prelude + MAIN, objective
        self.cpu: list[float] = []
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # every setup's bytecode cached alike
        self.env |= {"PYTHONPATH": path or "", "PYTHONPYCACHEPREFIX": f"{root}-pycache"}
        self.run("init")
        self.run("--agent", "other", "claim", "src/http/", "--ttl", "3600", "--objective", HELD)

    def run(self, *args: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", self.code, *args, "--json"],
            cwd=self.root, env=self.env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        answer = json.loads(done.stdout.splitlines()[-1])
        assert isinstance(answer, dict)
        return answer

    def claim_release(self) -> list[float]:
        """Wall time of one claim and its release, and the CPU time the two processes used
        (steadier than wall time on a machine others share)."""
        start, cpu = time.perf_counter(), _children_cpu()
        words = ["--objective", self.objective] if self.objective else []
        claim = self.run("--agent", "bench", "claim", "src/x/", *words)
        self.run("--agent", "bench", "release", str(claim["id"]))
        took, used = time.perf_counter() - start, _children_cpu() - cpu
        assert bool(claim["warnings"]) == ("wordllama" not in self.code and bool(self.objective))
        self.cpu.append(used)
        return [took]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def base_tree(work: Path, rev: str) -> str:
    """``memkeeper/`` and ``policies/`` of ``rev``, unpacked under ``work``; their parent."""
    target = work / "base"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "memkeeper", "policies"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return str(target)


def in_process(count: int) -> list[tuple[str, float]]:
    """The model's first load, one embedding, and 100 claims scored (seconds each)."""
    from memkeeper.claims.similar import score
    from memkeeper.fs import embedding

    start = time.perf_counter()
    embedding.model()
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    for number in range(count):
        embedding.model().embed(f"{ASKED} {number}")
    one = (time.perf_counter() - start) / count
    query = embedding.embed(ASKED)
    others = [embedding.embed(f"{HELD} {n}") for n in range(100)]
    start = time.perf_counter()
    for _ in range(10):
        [score(query, other) for other in others]
    scored = (time.perf_counter() - start) / 10
    return [
        ("model load (first comparison in a process)", loaded),
        ("one objective embedded", one),
        ("100 live claims scored against it (pure Python)", scored),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic", description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--base", default="", help="the code to compare with (git revision)")
    args = parser.parse_args(argv)
    base = args.base or _fork_point()
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-semantic-"))
    try:
        old = base_tree(work, base)
        setups = {
            f"base ({base[:7]})": Setup(sample_copy(work / "a"), HIDE, old, ASKED),
            "no extra": Setup(sample_copy(work / "b"), HIDE, None, ASKED),
            "extra, no objective": Setup(sample_copy(work / "c"), "", None, ""),
            "extra, compared": Setup(sample_copy(work / "d"), "", None, ASKED),
        }
        steps: list[Callable[[], list[float]]] = [s.claim_release for s in setups.values()]
        samples = interleave(steps, args.rounds, warmup=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"`claim` + `release` on the command line, {args.rounds} rounds interleaved\n")
    print("| setup | wall, median (p90) | CPU, median (p90) |\n| --- | --- | --- |")
    for (name, setup), kept in zip(setups.items(), samples, strict=True):
        wall, cpu = summarize(kept), summarize(setup.cpu[-len(kept) :])
        print(
            f"| {name} | {wall.median * 1000:.1f} ms ({wall.p90 * 1000:.1f}) "
            f"| {cpu.median * 1000:.1f} ms ({cpu.p90 * 1000:.1f}) |"
        )
    print("\n| in one process | time |\n| --- | --- |")
    for label, seconds in in_process(1000):
        print(f"| {label} | {seconds * 1000:.3f} ms |")
    return 0


def _fork_point() -> str:
    found = subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "HEAD", "main"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return found.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
