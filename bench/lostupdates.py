"""Lost updates under a race: what an agent's plain read-modify-write loses, and memkeeper's CAS.

    .venv/bin/python -m bench.lostupdates [--processes 6] [--updates 20] [--repeats 10] [--json]

``--processes`` processes each add ``--updates`` unique lines to ONE section (``## Testing``)
of ``CLAUDE.md`` in a fresh copy of sample-repo, all starting at once (a barrier):

- naive: read the whole file, put the line at the end of the section, write the whole file
  back with a plain ``open(path, "w")`` — what an agent's Read and Write tools do;
- atomic: the same, but the write goes to a temp file and ``os.replace`` — no torn file, yet
  still last-writer-wins;
- memkeeper: ``Memory.read`` of the section, then ``Memory.patch(..., expect_rev=rev)``, and on
  ``Conflict`` read again and retry; one ``Memory`` per process;
- merge: the same with ``merge=True`` (issue 14: retries ≤ 10 % of the updates, the race ≤ 5 times
  the naive loop's time).

Every attempt waits ``--think-ms`` between its read and its write (the agent deciding what to
write; an LLM takes seconds). Afterwards the lines missing from the file are the lost
updates; the sample's own lines missing from it mean the file was damaged. The variants run in
turn, ``--repeats`` times, so all see the same noise; the first round is warm-up.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from bench import machine
from bench.fixture import SAMPLE, Shell, sample_copy
from bench.race import FILE, VARIANTS, WITH_MEMKEEPER, Crew, Task, Variant, update_line
from bench.stats import Figure, interleave

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

LABELS = {
    "naive": "read whole file, insert, `open(path, 'w')` write back",
    "atomic": "the same with an atomic write (temp file + `os.replace`)",
    "memkeeper": "`Memory.read` → `Memory.patch(expect_rev=…)`, retry on `Conflict`",
    "merge": "the same with `merge=True`: a stale patch merges instead of retrying",
}


class Outcome(NamedTuple):
    """One race: updates made, lost, sample lines lost (file damaged), retries, seconds."""

    variant: Variant
    total: int
    lost: int
    damaged: int
    retries: int
    seconds: float


class Races:
    """One variant's races, each on a fresh copy of sample-repo under ``work``."""

    def __init__(self, crew: Crew, work: Path, variant: Variant, updates: int, think_s: float):
        self.crew, self.work, self.variant = crew, work, variant
        self.updates, self.think_s = updates, think_s
        self.outcomes: list[Outcome] = []

    def __call__(self) -> list[float]:
        root = sample_copy(self.work / f"{self.variant}-{len(self.outcomes)}")
        if self.variant in WITH_MEMKEEPER:
            Shell(root, self.work / "pycache", as_is=False).memkeeper_run("init", "--json")
        retries, seconds = self.crew.race(Task(self.variant, str(root), self.updates, self.think_s))
        text = (root / FILE).read_text(encoding="utf-8")
        lines = set(text.splitlines())
        wanted = [
            update_line(w, n) for w in range(len(self.crew.workers)) for n in range(self.updates)
        ]
        sample = [s for s in (SAMPLE / FILE).read_text(encoding="utf-8").splitlines() if s]
        lost, damaged = sum(w not in lines for w in wanted), sum(s not in lines for s in sample)
        self.outcomes.append(Outcome(self.variant, len(wanted), lost, damaged, retries, seconds))
        shutil.rmtree(root)
        return [seconds]


def measure(
    processes: int, updates: int, repeats: int, think_ms: float, work: Path
) -> dict[str, Any]:
    """``repeats`` rounds of every variant in turn (after one warm-up round)."""
    crew = Crew(processes)
    try:
        races = [Races(crew, work, v, updates, think_ms / 1e3) for v in VARIANTS]
        interleave(races, repeats, warmup=1)
    finally:
        crew.close()
    outcomes = {r.variant: r.outcomes[1:] for r in races}
    return {"processes": processes, "updates": updates, "repeats": repeats,
            "think_ms": think_ms, "outcomes": outcomes}  # fmt: skip


def _spread(values: Sequence[float], unit: str = "", digits: int = 0) -> str:
    """``median (range low-high)`` of ``values``."""
    mid, low, high = statistics.median(values), min(values), max(values)
    return f"{mid:,.{digits}f}{unit} (range {low:,.{digits}f}-{high:,.{digits}f})"


def _lost(outcomes: Sequence[Outcome]) -> str:
    return f"{_spread([o.lost for o in outcomes])} of {outcomes[0].total} lost"


def _damaged(outcomes: Sequence[Outcome]) -> str:
    runs = sum(o.damaged > 0 for o in outcomes)
    return f"{runs} of {len(outcomes)}"


def report_table(result: dict[str, Any]) -> str:
    lines = [
        "| variant | updates lost, median (range) | runs with sample lines lost | "
        "retries, median (range) | race time, median (range) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for variant, outcomes in result["outcomes"].items():
        retries = _spread([o.retries for o in outcomes]) if variant in WITH_MEMKEEPER else "—"
        seconds = _spread([o.seconds * 1e3 for o in outcomes], " ms")
        lines.append(
            f"| {variant}: {LABELS[variant]} | {_lost(outcomes)} | {_damaged(outcomes)} | "
            f"{retries} | {seconds} |"
        )
    return "\n".join(lines)


def figures(result: dict[str, Any]) -> list[Figure]:
    """memkeeper against each plain read-modify-write: lost updates, and the race's time."""
    ours: list[Outcome] = result["outcomes"]["memkeeper"]
    race = (
        f"{result['processes']} processes, {result['updates']} updates each, to one section, "
        f"{result['think_ms']:g} ms between read and write"
    )
    rows = []
    for variant in ("naive", "atomic"):
        theirs: list[Outcome] = result["outcomes"][variant]
        alternative = f"{LABELS[variant]}: {_lost(theirs)}"
        if any(o.damaged for o in theirs):
            alternative += f"; sample lines lost in {_damaged(theirs)} runs"
        met = max(o.lost for o in ours) == 0
        rows.append(Figure(f"lost updates, {race}", _lost(ours), alternative, "—", "0 lost", met))
    naive_s = statistics.median(o.seconds for o in result["outcomes"]["naive"])
    total = result["processes"] * result["updates"]
    for variant in WITH_MEMKEEPER:
        outcomes: list[Outcome] = result["outcomes"][variant]
        mine = statistics.median(o.seconds for o in outcomes)
        retries = statistics.median(o.retries for o in outcomes)
        merging = variant == "merge"
        rows.append(
            Figure(
                f"time for the whole race, {variant} ({race})",
                f"{mine * 1e3:,.0f} ms ({retries:,.0f} retries)",
                f"naive: {naive_s * 1e3:,.0f} ms",
                f"{mine / naive_s:.2f}x",
                "≤ 5x" if merging else "—",
                mine / naive_s <= 5 if merging else None,
            )
        )
        if merging:
            share = max(o.retries for o in outcomes) / total
            rows.append(
                Figure(
                    f"retries with merge=True, worst race ({race})",
                    f"{max(o.retries for o in outcomes)} of {total} updates ({share:.0%})",
                    f"without merge: {statistics.median(o.retries for o in ours):,.0f} retries",
                    "—",
                    "≤ 10% of updates",
                    share <= 0.10 and max(o.lost for o in outcomes) == 0,
                )
            )
    return rows


def command(args: argparse.Namespace) -> str:
    return (
        f".venv/bin/python -m bench.lostupdates --processes {args.processes} --updates "
        f"{args.updates} --repeats {args.repeats} --think-ms {args.think_ms:g}"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """``measure`` in a temp dir (under ``args.dir``), removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix="memkeeper-lost-", dir=args.dir))
    try:
        race = f"{args.processes} processes x {args.updates} updates"
        _progress(f"{args.repeats} rounds of {', '.join(VARIANTS)}, {race} each")
        result = measure(args.processes, args.updates, args.repeats, args.think_ms, work)
        result["filesystem"] = machine.filesystem_of(str(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {**result, "command": command(args)}


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.lostupdates", description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--processes", type=int, default=6, help="racing processes (6)")
    add("--updates", type=int, default=20, help="updates per process per race (20)")
    add("--repeats", type=int, default=10, help="races per variant, after 1 warm-up (10)")
    add("--think-ms", type=float, default=1.0, help="pause between read and write (1 ms)")
    add("--dir", help="parent of the temp dir (default: $TMPDIR or /tmp)")
    add("--json", action="store_true", help="print one JSON object")
    return parser


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    outcomes = {k: [o._asdict() for o in v] for k, v in result["outcomes"].items()}
    return {**result, "outcomes": outcomes, "figures": [f.to_json() for f in figures(result)]}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        facts = machine.markdown(machine.describe(args.dir or tempfile.gettempdir()))
        print(f"{facts}\n\n`{result['command']}`\n\n{report_table(result)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
