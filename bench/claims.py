"""Benchmark memkeeper's claims against a hand-rolled Redis lock and etcd leases.

    .venv/bin/python -m bench.claims [--pairs 100] [--rounds 20] [--json]

In one run, batches of claim+release pairs of every side in turn (memkeeper, Redis at equal
durability, Redis at its defaults, etcd…), so all see the same noise; each pair timed alone.
Redis and etcd come from Debian's packages, started here on 127.0.0.1 and free ports in the
run's temp dir and stopped at the end. Every side hands out fencing tokens, checked to keep
increasing during the run and, at the end, across a SIGKILL and restart (``bench.crash``).
Prints the machine, each side's settings, the rate table, the goals and the crash check.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench import crash, machine, servers
from bench.fixture import make_repo
from bench.sides import (
    REDIS,
    Side,
    etcd_pair,
    memkeeper_pair,
    redis_pair,
    redis_script_pair,
)
from bench.stats import Figure, Row, Summary, interleave, summarize, table
from memkeeper import MemkeeperError, Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from bench.servers import Server

MEASURE = "claim+release pairs/s, in-process"


class Pairs:
    """``count`` claim+release pairs of one side, each timed; its tokens must keep rising."""

    def __init__(self, side: Side, count: int) -> None:
        self.side, self.count, self.last = side, count, 0

    def __call__(self) -> list[float]:
        took = []
        for _ in range(self.count):
            start = time.perf_counter()
            token = self.side.pair()
            took.append(time.perf_counter() - start)
            if token <= self.last:
                raise RuntimeError(f"{self.side.name}: token {token} after {self.last}")
            self.last = token
        return took


def start_servers(stack: contextlib.ExitStack, work: Path) -> dict[str, Server]:
    """Every server, started (and stopped when ``stack`` closes, whatever happens)."""
    started: dict[str, Server] = {}
    for setup in REDIS:
        started[setup.name] = servers.redis(str(work), setup.name, setup.args)
    started["etcd"] = servers.etcd(str(work))
    for server in started.values():
        stack.callback(server.stop)
        _progress(f"starting {server.name} on 127.0.0.1:{server.port}")
        server.start()
    return started


def sides(stack: contextlib.ExitStack, memory: Memory, started: dict[str, Server]) -> list[Side]:
    """The compared sides, in the order each round runs them; memkeeper first."""
    always, everysec, default = REDIS
    port = {name: server.port for name, server in started.items()}
    return [
        memkeeper_pair(memory),
        redis_pair(stack, always, port[always.name]),
        redis_script_pair(stack, "redis-always, script", port[always.name]),
        redis_pair(stack, everysec, port[everysec.name]),
        redis_pair(stack, default, port[default.name]),
        etcd_pair(stack, "etcd", port["etcd"]),
    ]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-claims-", dir=args.dir))
    try:
        with contextlib.ExitStack() as stack:
            started = start_servers(stack, work)
            memory = Memory.open(make_repo(work, as_is=False).root, agent="bench")
            stack.callback(memory.close)
            compared = sides(stack, memory, started)
            _progress(f"{args.rounds} rounds of {args.pairs} pairs per side, in turn")
            steps = [Pairs(side, args.pairs) for side in compared]
            samples = interleave(steps, args.rounds)
            _progress("crash check: SIGKILL and restart of each token keeper")
            crashes = crash.check_all(memory, started)
        facts = {**machine.describe(str(work)), **servers.versions()}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    summaries = [summarize(kept) for kept in samples]
    return {"machine": facts, "command": _command(args), "sides": compared,
            "summaries": summaries, "crashes": crashes}  # fmt: skip


def goal_rows(compared: Sequence[Side], summaries: Sequence[Summary]) -> list[Row]:
    """memkeeper against every side that carries a goal."""
    ours = summaries[0]
    return [
        Row(MEASURE, side.name, "ops/s", ours, theirs, side.goal, "higher")
        for side, theirs in zip(compared, summaries, strict=True)
        if side.goal is not None
    ]


def figures(result: dict[str, Any]) -> list[Figure]:
    """memkeeper's rate against every other side (a goal where the issue sets one), and the
    fencing tokens across a crash of each token keeper."""
    compared, summaries = result["sides"], result["summaries"]
    rows = [row.figure() for row in goal_rows(compared, summaries)]
    for side, theirs in zip(compared[1:], summaries[1:], strict=True):
        if side.goal is None:
            row = Row(MEASURE, side.name, "ops/s", summaries[0], theirs, 0, "higher").figure()
            rows.append(row._replace(goal="— (not equal durability)", met=None))
    checks: list[crash.CrashCheck] = result["crashes"]
    ours, others = checks[0], checks[1:]
    reissued = [c for c in others if not c.rising]
    alternative = "; ".join(f"{c.keeper}: {c.before:,} → {c.after:,}" for c in reissued or others)
    rows.append(Figure("fencing token after a SIGKILL of its keeper, then the next grant",
                       f"{ours.before:,} → {ours.after:,}", alternative, "—",
                       "strictly increasing", ours.rising))  # fmt: skip
    return rows


def side_table(compared: Sequence[Side], summaries: Sequence[Summary]) -> str:
    lines = [
        "| side | per pair | pairs/s median (latency median, p90) | memkeeper ÷ side |",
        "| --- | --- | --- | --- |",
    ]
    for side, got in zip(compared, summaries, strict=True):
        rate = f"{1 / got.median:,.0f}/s ({got.median * 1e3:.2f} ms, p90 {got.p90 * 1e3:.2f})"
        ratio = got.median / summaries[0].median
        lines.append(f"| {side.name} | {side.cost} | {rate} | {ratio:.2f}x |")
    return "\n".join(lines)


def report(result: dict[str, Any]) -> str:
    compared, summaries = result["sides"], result["summaries"]
    settings = "\n".join(f"- {side.name}: {side.settings}" for side in compared)
    return (
        f"{machine.markdown(result['machine'])}\n\n`{result['command']}`\n\n"
        f"Settings:\n\n{settings}\n\n{side_table(compared, summaries)}\n\n"
        f"{table(goal_rows(compared, summaries))}\n\n{crash.table(result['crashes'])}\n"
    )


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    compared, summaries = result["sides"], result["summaries"]
    per_side = [
        {**side.to_json(), **got.to_json(), "pairs_per_s": 1 / got.median}
        for side, got in zip(compared, summaries, strict=True)
    ]
    goals = [row.to_json() for row in goal_rows(compared, summaries)]
    crashes = [check.to_json() for check in result["crashes"]]
    return {"machine": result["machine"], "command": result["command"], "sides": per_side,
            "goals": goals, "crash": crashes}  # fmt: skip


def _command(args: argparse.Namespace) -> str:
    return f".venv/bin/python -m bench.claims --pairs {args.pairs} --rounds {args.rounds}"


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _terminated(signum: int, frame: object) -> NoReturn:
    raise SystemExit(128 + signum)  # unwinds like Ctrl-C: the servers are stopped


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench.claims", description="memkeeper claims vs Redis and etcd locks."
    )
    add = parser.add_argument
    add("--pairs", type=int, default=100, help="claim+release pairs per side per round (100)")
    add("--rounds", type=int, default=20, help="rounds, after 3 dropped as warm-up (20)")
    add("--dir", help="parent of the temp dir (default: $TMPDIR or /tmp)")
    add("--keep", action="store_true", help="keep the temp dir (repository, server data, logs)")
    add("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if absent := servers.missing():
        _progress(f"not installed: {', '.join(absent)} — apt-get install redis-server etcd-server")
        return 1
    signal.signal(signal.SIGTERM, _terminated)
    try:
        result = measure(args)
    except (RuntimeError, OSError, MemkeeperError) as exc:  # say what failed, no traceback
        _progress(f"failed: {exc}")
        return 1
    except KeyboardInterrupt:
        _progress("interrupted; the servers are stopped and the temp dir removed")
        return 130
    if args.json:
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print(report(result), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
