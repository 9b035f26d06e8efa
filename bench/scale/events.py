"""Issue 26, the event log: what a render, the metrics and the daemon cost at 1,000 events and
at 1,000,000 (100,000 with ``--quick``), side by side.

    .venv/bin/python -m bench.scale --only events [--quick]

Two copies of sample-repo (``memkeeper init``) get their history in one process:
``Workspace.record`` in transactions of ``BLOCK`` events — the chained, hashed append of
``memkeeper emit``, without a process and a commit per event (1,000,000 take ~2-4 min here;
one ``emit`` a process would take hours). A fake clock dates them ``STEP_S`` apart up to now,
so each log's last hour holds the same events — a steady fleet whose history grows with time
(1,000,000 events span 42 days) — in a mix (``MIX``): a third the daemon's own
``region.regenerated``, claims granted, released, queued and aborted, entries appended to the
decisions file (what sample-repo's ``decisions-feed`` template shows), the rest emitted.

Rows, each size in turn for every round (medians):

- ``regen`` after one event: ``memkeeper emit``, then ``memkeeper regen`` timed, each a
  process as an agent runs it (its page shows the events, the feed and the claims);
- ``/api/metrics``: the dashboard's route in process (Starlette's TestClient on
  ``dashboard.app.build``), as its first page load and every claim event ask it;
- the daemon's CPU per event: ``memkeeper watch`` started on each copy, then ``EMITS``
  events ``PACE_S`` apart; its CPU time (``/proc/PID/stat``) over them, per event.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.fixture import bench_env
from bench.scale.files import memkeeper
from bench.scale.growth import Growth
from memkeeper import Memory
from memkeeper.clock import FakeClock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

SMALL, BIG, QUICK_BIG = 1_000, 1_000_000, 100_000
BLOCK = 10_000  # events a transaction while the history is made
STEP_S = 3.6  # between two events of the history: 1,000 an hour
MIX = (  # (every how many events, type, path): the first that divides the event's number
    (3, "region.regenerated", "memory/status.md"),
    (20, "claim.granted", None),
    (21, "claim.released", None),
    (50, "entry.appended", "memory/decisions.md"),
    (97, "claim.queued", None),
    (199, "claim.aborted", None),
)
ROUNDS, QUICK_ROUNDS = 5, 3
EMITS, QUICK_EMITS = 20, 10
PACE_S = 0.5
TOKEN = "bench-token"


def history(root: Path, count: int) -> float:
    """``count`` events in ``root``'s log, ending now (see the module's docstring); seconds."""
    start = time.perf_counter()
    clock = FakeClock(time.time() - count * STEP_S)
    memory = Memory.open(root, agent="bench", clock=clock)
    ws = memory.workspace
    try:
        for first in range(0, count, BLOCK):
            with ws.store.writing():
                for n in range(first, min(first + BLOCK, count)):
                    clock.advance(STEP_S)
                    kind, path = _kind(n)
                    ws.record(kind, path, None, _data(kind, n))
    finally:
        memory.close()
    return time.perf_counter() - start


def _kind(n: int) -> tuple[str, str | None]:
    for every, kind, path in MIX:
        if n % every == 0:
            return kind, path
    return "task.noted", None


def _data(kind: str, n: int) -> dict[str, object]:
    if kind == "entry.appended":
        return {"title": f"decision {n}", "key": f"entry-{n}"}
    if kind.startswith("claim."):
        data: dict[str, object] = {"id": f"c{n // 20}", "targets": ["src/api/"]}
        return {**data, "reason": "deadlock"} if kind == "claim.aborted" else data
    return {"n": n}


def repo(work: Path, name: str, count: int) -> Path:
    """sample-repo under ``work/name``, ``memkeeper init``, ``count`` events of history."""
    from bench.fixture import sample_copy

    root = sample_copy(work / name)
    memkeeper(root, "init", "--json")
    took = history(root, count)
    print(f"events: {name}: {count:,} events made in {took:.0f} s", file=sys.stderr)
    return root


def regen_after_one_event(root: Path) -> float:
    memkeeper(root, "emit", "task.done", "--data", '{"n": 1}')
    return memkeeper(root, "regen", "--json")[0]


class Metrics:
    """The dashboard's app on ``root``, asked ``/api/metrics`` in process."""

    def __init__(self, root: Path) -> None:
        from starlette.testclient import TestClient

        from memkeeper.dashboard.app import build

        self.client = TestClient(build(str(root), TOKEN), base_url="http://127.0.0.1:8765")
        self.client.__enter__()

    def ask(self) -> float:
        start = time.perf_counter()
        answer = self.client.get("/api/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        took = time.perf_counter() - start
        assert answer.status_code == 200, answer.text
        return took

    def close(self) -> None:
        self.client.__exit__(None, None, None)


def daemon_cpu_per_event(root: Path, emits: int) -> float:
    """Seconds of ``memkeeper watch``'s CPU per event, over ``emits`` events."""
    exe = str(Path(sys.executable).parent / "memkeeper")
    env = bench_env(root.parent / "pycache", as_is=False)
    watch = subprocess.Popen(
        [exe, "watch", "--json"], cwd=root, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert watch.stdout is not None
        for line in watch.stdout:  # its start-up render: not what is measured
            if '"started"' in line:
                break
        time.sleep(2.0)
        before = _cpu(watch.pid)
        for n in range(emits):
            memkeeper(root, "emit", "task.done", "--data", f'{{"n": {n}}}')
            time.sleep(PACE_S)
        time.sleep(1.0)  # the last one rendered
        return (_cpu(watch.pid) - before) / emits
    finally:
        watch.terminate()
        watch.wait(timeout=30)


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _median(measure: Callable[[Path], float], roots: list[Path], rounds: int) -> list[float]:
    """``measure`` on each root in turn, ``rounds`` times after a warm-up round; the median
    of each."""
    for root in roots:
        measure(root)
    times: list[list[float]] = [[] for _ in roots]
    for _ in range(rounds):
        for i, root in enumerate(roots):
            times[i].append(measure(root))
    return [statistics.median(t) for t in times]


def run(work: Path, quick: bool) -> list[Growth]:
    big = QUICK_BIG if quick else BIG
    rounds = QUICK_ROUNDS if quick else ROUNDS
    roots = [repo(work, "small", SMALL), repo(work, "big", big)]
    labels = (f"{SMALL:,} events", f"{big:,} events")
    regen = _median(regen_after_one_event, roots, rounds)
    servers = [Metrics(root) for root in roots]
    try:
        for server in servers:
            server.ask()  # warm: imports, the store opened
        asked = _median(lambda root: servers[roots.index(root)].ask(), roots, rounds * 4)
    finally:
        for server in servers:
            server.close()
    emits = QUICK_EMITS if quick else EMITS
    cpu = [daemon_cpu_per_event(root, emits) for root in roots]
    return [
        Growth("`regen` after one event", *labels, "s", regen[0], regen[1], 1.5),
        Growth("dashboard `/api/metrics`", *labels, "s", asked[0], asked[1], 1.5),
        Growth("`watch` CPU per event", *labels, "s", cpu[0], cpu[1], 1.5),
    ]
