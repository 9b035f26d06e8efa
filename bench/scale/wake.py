"""Issue 26: claim + release of one path with a wait, by 2 and by 32 agent processes at once.

    .venv/bin/python -m bench.scale --only wake [--quick]

Every agent is a process of its own (``python -m bench.scale.wake AGENT …``) that opens the
repository's ``Memory`` as an identity of its own and, from a start time the parent sets (all
have imported memkeeper and opened the store by then), loops: ``claim(TARGET, wait=…)``, then
``release``. So at any moment one agent holds the path and the others wait in the queue. The
rate is the pairs every agent completed within the window, over the window; the wait of a
claim is from its call to its grant: about the queue's length times a pair's time when the
queue is served in order, and the longest one tells whether a waiter starved (each agent's
first claim, queued in the start's burst, is left out of the waits). Rounds of 2
and of 32 agents alternate, so both see the machine's noise; the table shows the median of
the rounds: the time per pair (the inverse of the rate; goal: at 32 agents at most twice
that at 2, i.e. a rate of at least half), the mean and the longest wait at each size.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.fixture import bench_env, sample_copy
from bench.scale.growth import Growth

TARGET = "src/hot.py"
SMALL, BIG = 2, 32
WAIT_S = 300.0  # a claim's --wait: long enough never to run out
TTL_S = 600


def run(work: Path, quick: bool) -> list[Growth]:
    root = sample_copy(work / "repo")
    subprocess.run(_agent_cmd("init", root), check=True, env=_env(work), capture_output=True)
    window, rounds = (3.0, 1) if quick else (8.0, 3)
    got: dict[int, list[tuple[float, float, float]]] = {SMALL: [], BIG: []}
    for _ in range(rounds):
        for agents in (SMALL, BIG):
            got[agents].append(_round(work, root, agents, window))
    per_pair = {n: statistics.median(1000.0 / rate for rate, _, _ in got[n]) for n in got}
    longest = {n: statistics.median(most for _, most, _ in got[n]) for n in got}
    mean = {n: statistics.median(average for _, _, average in got[n]) for n in got}
    sizes = (f"{SMALL} agents", f"{BIG} agents")
    return [
        Growth("claim+release with --wait, one path", *sizes, "ms/pair", per_pair[SMALL],
               per_pair[BIG], ratio_goal=2.0),
        Growth("mean wait for the claim", *sizes, "s", mean[SMALL], mean[BIG]),
        Growth("longest wait for the claim", *sizes, "s", longest[SMALL], longest[BIG]),
    ]  # fmt: skip


def _round(work: Path, root: Path, agents: int, window: float) -> tuple[float, float, float]:
    """One round of ``agents`` processes: pairs per second, the longest and the mean wait
    in seconds."""
    place = work / f"round-{time.monotonic_ns()}"
    place.mkdir()
    go = place / "go.json"
    procs = [
        subprocess.Popen(_agent_cmd("loop", root, f"agent-{n}", place, n), env=_env(work))
        for n in range(agents)
    ]
    ready_by = time.monotonic() + 120
    while len(list(place.glob("ready-*"))) < agents:  # every agent has opened its store
        if time.monotonic() > ready_by or any(p.poll() is not None for p in procs):
            raise RuntimeError(f"the agents of the {agents}-agent round did not get ready")
        time.sleep(0.02)
    start = time.time() + 0.2
    (place / "go.tmp").write_text(json.dumps([start, start + window]))
    (place / "go.tmp").rename(go)
    for proc in procs:
        if proc.wait(timeout=window + 120) != 0:
            raise RuntimeError(f"an agent of the {agents}-agent round failed")
    outs = [json.loads((place / f"out-{n}.json").read_text()) for n in range(agents)]
    # an agent's first claim queues in the start's burst (all at once): left out of the waits
    waits = [wait for out in outs for wait in out["waits"][1:]]
    pairs = sum(len(out["waits"]) for out in outs)
    mean = statistics.mean(waits) if waits else 0.0
    return pairs / window, max(waits, default=0.0), mean


def _agent_cmd(*args: str | Path | int) -> list[str]:
    return [sys.executable, "-m", "bench.scale.wake", *map(str, args)]


def _env(work: Path) -> dict[str, str]:
    return bench_env(work / "pycache", as_is=False)


def _init(root: str) -> None:
    from memkeeper import Memory

    memory = Memory.open(root, agent="setup")  # the store made before any agent starts
    memory.release(memory.claim(TARGET, ttl=TTL_S).id)


def _loop(root: str, agent: str, place: Path, n: int) -> None:
    """Once the parent says go (``go.json``: the window), claim and release ``TARGET``
    until the window ends; what it did, to ``out-N.json``."""
    from memkeeper import Memory

    memory = Memory.open(root, agent=agent)
    memory.claims()  # the store opened, its modules imported
    (place / f"ready-{n}").touch()
    while not (place / "go.json").exists():
        time.sleep(0.005)
    start, until = json.loads((place / "go.json").read_text())
    time.sleep(max(0.0, start - time.time()))
    waits: list[float] = []
    while time.time() < until:
        asked = time.perf_counter()
        claim = memory.claim(TARGET, wait=WAIT_S, ttl=TTL_S)
        waited = time.perf_counter() - asked
        memory.release(claim.id)
        if time.time() <= until:  # a pair that ends after the window is not counted
            waits.append(waited)
    (place / f"out-{n}.json").write_text(json.dumps({"waits": waits}))


if __name__ == "__main__":
    if sys.argv[1] == "init":
        _init(sys.argv[2])
    else:
        _, _, root, agent, place, n = sys.argv
        _loop(root, agent, Path(place), int(n))
