"""Two installs of memkeeper side by side, in one run: what an agent's CLI calls cost on each.

    .venv/bin/python -m bench.versus --before OTHER/.venv/bin/memkeeper [--runs 100] [--json]

``--before`` is the ``memkeeper`` console script of another install (another commit's
checkout in its own virtual environment); the other side, *after*, is this environment's.
Each side gets its own initialised copy of ``sample-repo/``, made by its own memkeeper (two
commits' stores need not share a schema). Every round times, on both sides: ``read``, a
``patch`` (the rev its previous patch returned, two bodies in turn) by a user with no key and
again by one with a key (made by after's ``keys init``: after signs the patch's event, before
knows no keys), a ``claim`` followed by its ``release`` (two processes, timed together), and
the gate — ``memkeeper hook AGENT`` with a whole-file write of ``CLAUDE.md`` (denied) and of
a source file (allowed), in each agent's own payload (``bench.gate``) — plus ``python -c
pass``. Within a round each measure runs
before then after, or after then before (alternating rounds), so both see the same noise;
the ratio is taken round by round (after / before) and its median reported with the 10th and
90th percentiles. With ``--instructions`` each command also runs under ``valgrind
--tool=callgrind`` (``PYTHONHASHSEED=0``), once to warm up and then twice, the fewer kept: the
instructions it executes in user space, which the machine's noise does not move (system calls
and waits are not counted; the fewer of two, as a write now and then finds work left by a
slower one before it, such as kept links due for removal).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench.fixture import bench_env, sample_copy
from bench.gate import HARMLESS, MEMORY, PAYLOADS
from bench.stats import summarize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

REF = "CLAUDE.md#build"
TARGET = "src/inventory/"
VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
BODIES = (
    "\n- Python 3.11; dependencies pinned in `pyproject.toml`.\n- `make build` writes dist/.\n\n",
    "\n- Python 3.11; dependencies listed in `pyproject.toml`.\n- `make build` fills dist/.\n\n",
)


class Side:
    """One install: its console script, its repository, the environment of its commands."""

    def __init__(self, name: str, memkeeper: str, work: Path, cache: Path) -> None:
        self.name, self.memkeeper = name, memkeeper
        self.counting = False  # instructions (valgrind) instead of seconds
        self.root = sample_copy(work / name)
        # No key (whatever this user has), and for the signed patch the keys ``keys init`` made.
        self.env = {**bench_env(cache, as_is=False), "XDG_CONFIG_HOME": str(work / "no-keys")}
        self.signed_env = {**self.env, "XDG_CONFIG_HOME": str(work / "keys")}
        self.hook_env = {k: v for k, v in self.env.items() if k != "MEMKEEPER_AGENT"}
        self.bodies = [work / f"{name}-body-{i}.md" for i in range(len(BODIES))]
        for path, body in zip(self.bodies, BODIES, strict=True):
            path.write_text(body, encoding="utf-8")
        self.run("init", "--json")
        self.rev = int(json.loads(self.run("read", REF, "--json")[1])["rev"])
        self.turn = 0

    def run(
        self, *args: str, stdin: bytes = b"", env: Mapping[str, str] | None = None
    ) -> tuple[float, bytes]:
        """Wall time of ``memkeeper ARGS`` (spawn to exit) and its stdout; exit 0 expected.
        While ``counting``: the instructions it executed instead of its time."""
        argv, env = [self.memkeeper, *args], dict(env or self.env)
        if self.counting:
            argv, env["PYTHONHASHSEED"] = [*VALGRIND, *argv], "0"
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=self.root, env=env, input=stdin, capture_output=True)
        took = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: {' '.join(argv)}: exit {done.returncode}: "
                               f"{done.stdout.decode()}{done.stderr.decode()}")  # fmt: skip
        if self.counting:
            found = re.search(rb"Collected : (\d+)", done.stderr)
            if found is None:
                raise RuntimeError(f"{self.name}: valgrind counted nothing: {done.stderr!r}")
            return float(found.group(1)), done.stdout
        return took, done.stdout

    def read(self) -> float:
        return self.run("read", REF, "--json")[0]

    def patch(self, env: Mapping[str, str] | None = None) -> float:
        body = str(self.bodies[self.turn % len(self.bodies)])
        self.turn += 1
        took, out = self.run("patch", REF, "--expect-rev", str(self.rev), "--body-file", body,
                             "--json", env=env)  # fmt: skip
        self.rev = int(json.loads(out)["rev"])
        return took

    def signed_patch(self) -> float:
        """A patch by a user with a key (the event signed, where the install signs)."""
        return self.patch(self.signed_env)

    def claim_release(self) -> float:
        took, out = self.run("claim", TARGET, "--mode", "write", "--ttl", "30", "--json")
        more, _ = self.run("release", json.loads(out)["id"], "--json")
        return took + more

    def hook(self, agent: str, path: str, text: str, denied: bool) -> Callable[[], float]:
        call = PAYLOADS[agent](self.root, path, text)

        def step() -> float:
            took, out = self.run(*call.argv, stdin=call.stdin, env=self.hook_env)
            if (b"memkeeper patch" in out) != denied:
                raise RuntimeError(f"{self.name}: hook {agent}: unexpected answer: {out!r}")
            return took

        return step


class Measure(NamedTuple):
    label: str
    before: Callable[[], float]
    after: Callable[[], float]


def measures(before: Side, after: Side, agents: Sequence[str]) -> list[Measure]:
    found = [
        Measure(f"`memkeeper read {REF} --json`", before.read, after.read),
        Measure(f"`memkeeper patch {REF} --expect-rev N --body-file F --json`", before.patch,
                after.patch),
        Measure("the same patch, the user having a key (`keys init`; before: never signs)",
                before.signed_patch, after.signed_patch),
        Measure(f"`memkeeper claim {TARGET} --mode write --ttl 30` + `release ID`",
                before.claim_release, after.claim_release),
    ]  # fmt: skip
    for agent in agents:
        for what, path, text in (("deny", "CLAUDE.md", MEMORY), ("allow", HARMLESS, "x = 1\n")):
            denied = what == "deny"
            found.append(
                Measure(
                    f"`memkeeper hook {agent}` ({what})",
                    before.hook(agent, path, text, denied),
                    after.hook(agent, path, text, denied),
                )
            )
    return found


def bare() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def rounds(found: Sequence[Measure], runs: int, warmup: int) -> list[tuple[list[float], ...]]:
    """Per measure: (before, after) samples, the two in turn, the order swapped each round;
    the last entry is ``python -c pass`` (both lists the same samples)."""
    samples: list[tuple[list[float], list[float]]] = [([], []) for _ in found]
    passes: list[float] = []
    for index in range(warmup + runs):
        took_pass = bare()
        for measure, (b, a) in zip(found, samples, strict=True):
            if index % 2:
                got_a, got_b = measure.after(), measure.before()
            else:
                got_b, got_a = measure.before(), measure.after()
            if index >= warmup:
                b.append(got_b)
                a.append(got_a)
        if index >= warmup:
            passes.append(took_pass)
    return [*samples, (passes, passes)]


def fewest(step: Callable[[], float]) -> float:
    """The fewer of two runs of ``step`` after one that warms caches up."""
    step()
    return min(step(), step())


def instructions(found: Sequence[Measure], sides: Sequence[Side]) -> list[tuple[float, float]]:
    """Per measure: (before, after) instructions, each side's command run once to warm up."""
    for side in sides:
        side.counting = True
    try:
        return [(fewest(m.before), fewest(m.after)) for m in found]
    finally:
        for side in sides:
            side.counting = False


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def row(label: str, before: Sequence[float], after: Sequence[float]) -> dict[str, Any]:
    ratios = [a / b for a, b in zip(after, before, strict=True)]
    return {
        "measure": label,
        "before_ms": summarize(before).median * 1e3,
        "after_ms": summarize(after).median * 1e3,
        "ratio": statistics.median(ratios),
        "ratio_p10": quantile(ratios, 0.1),
        "ratio_p90": quantile(ratios, 0.9),
        "n": len(ratios),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.versus", description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the other install's memkeeper script")
    parser.add_argument("--runs", type=int, default=100, help="rounds (100)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds run first and dropped (3)")
    parser.add_argument("--agents", default="claude-code,codex",
                        help=f"the gate's agents, comma-separated (claude-code,codex; "
                             f"known: {','.join(PAYLOADS)})")  # fmt: skip
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count each command's instructions (needs valgrind)",
    )
    parser.add_argument("--dir", default=None, help="where the temp repositories go")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    agents = [a for a in args.agents.split(",") if a]
    work = Path(tempfile.mkdtemp(prefix="memkeeper-versus-", dir=args.dir))
    try:
        cache = work / "pycache"
        before = Side("before", args.before, work, cache)
        after = Side("after", str(Path(sys.executable).parent / "memkeeper"), work, cache)
        after.run("keys", "init", "--json", env=after.signed_env)
        found = measures(before, after, agents)
        samples = rounds(found, args.runs, args.warmup)
        counted = instructions(found, (before, after)) if args.instructions else []
    finally:
        shutil.rmtree(work, ignore_errors=True)
    labels = [m.label for m in found] + ["`python -c pass`"]
    rows = [row(label, b, a) for label, (b, a) in zip(labels, samples, strict=True)]
    for r, (b, a) in zip(rows, counted, strict=False):
        r.update(before_instructions=b, after_instructions=a)
    if args.json:
        print(json.dumps({"before": args.before, "runs": args.runs, "rows": rows}, indent=2))
        return 0
    counts = " instructions, before | after | after / before |" if counted else ""
    print(f"| command | before | after | after / before, median (p10 to p90) |{counts}")
    print(f"| --- | --- | --- | --- |{' --- | --- | --- |' if counted else ''}")
    for r in rows:
        line = (f"| {r['measure']} | {r['before_ms']:.1f} ms | {r['after_ms']:.1f} ms | "
                f"{r['ratio']:.3f} ({r['ratio_p10']:.2f} to {r['ratio_p90']:.2f}) |")  # fmt: skip
        if "after_instructions" in r:
            b, a = r["before_instructions"], r["after_instructions"]
            line += f" {b / 1e6:.2f} M | {a / 1e6:.2f} M | {a / b:.4f} |"
        elif counted:
            line += " | | |"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
