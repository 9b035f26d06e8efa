"""Issue 26's event chain: a routine ``memkeeper verify`` after a checkpoint, at 1,000 and at
1,000,000 events (100,000 with ``--quick``), and ``verify --full`` beside it for reference.

Each repository is sample-repo under memkeeper, with a human key (its own
``XDG_CONFIG_HOME``) so that verify signs its checkpoints. Its log is filled in this process
through the store's ``append_event``, signed as ``emit`` signs, in transactions of
``FILL_BATCH`` events: ``Memory.emit`` in a loop commits (and syncs) once per event, ~7 ms
each on the project's machine — two hours for a million. A first ``verify --full`` leaves the
checkpoint. Then each round adds the same ``NEW`` events to both logs (``Memory.emit``) and
times ``memkeeper verify`` on each in turn: the routine verify walks those events from the
checkpoint, whatever came before it — and, before that, the chain's part alone (the walk and
its signed checkpoint: one commit) is timed ``WALKS`` times in this process, each over another
``NEW`` events. ``verify --full`` is timed once on each at the end.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.fixture import bench_env, sample_copy
from bench.scale.growth import Growth
from memkeeper import Memory
from memkeeper.events import iso_utc
from memkeeper.ops.chain import verify_chain

FILL_BATCH = 10_000  # events appended by one transaction of the fixture
NEW = 10  # events each round adds before its routine verify
WALKS = 3  # the chain's part timed this many times a round
LIMIT_S = 1.0  # the bound on a routine verify at a million events


def run(work: Path, quick: bool) -> list[Growth]:
    small_n, big_n = 1_000, 100_000 if quick else 1_000_000
    rounds = 3 if quick else 5
    small = _repo(work / "small", small_n)
    big = _repo(work / "big", big_n)
    routine: dict[Path, list[float]] = {small: [], big: []}
    walk: dict[Path, list[float]] = {small: [], big: []}
    opened = {root: _open(root) for root in (small, big)}
    try:
        for turn in range(rounds):
            for root in (small, big) if turn % 2 == 0 else (big, small):
                walk[root] += [_walk(opened[root]) for _ in range(WALKS)]
                _emit(opened[root], NEW)
                took, found = _verify(root)
                assert found["checked"] == NEW, found  # walked from the checkpoint, no further
                routine[root].append(took)
    finally:
        for memory in opened.values():
            memory.close()
    full = {root: _verify(root, "--full")[0] for root in (small, big)}
    labels = f"{small_n:,} events", f"{big_n:,} events"
    return [
        Growth(
            "routine `verify` after a checkpoint",
            *labels,
            "s",
            statistics.median(routine[small]),
            statistics.median(routine[big]),
            ratio_goal=1.5,
            limit=LIMIT_S,
        ),
        Growth(
            "its chain part in process (`ops.chain`)",
            *labels,
            "ms",
            statistics.median(walk[small]) * 1000,
            statistics.median(walk[big]) * 1000,
            ratio_goal=1.5,
        ),
        Growth("`verify --full` (reference)", *labels, "s", full[small], full[big]),
    ]


def _repo(root: Path, events: int) -> Path:
    """sample-repo at ``root`` under memkeeper with a key, its log ``events`` long and
    checkpointed by a full verify."""
    sample_copy(root)
    _memkeeper(root, "init", "--json")
    _memkeeper(root, "keys", "init", "--human-name", "bench", "--json")
    start = time.perf_counter()
    memory = Memory.open(root, agent="bench")
    ws = memory.workspace
    os.environ["XDG_CONFIG_HOME"] = _config(root)  # the key this process signs with
    try:
        sign = ws.signing.sign_as("bench")
        for first in range(0, events, FILL_BATCH):
            with ws.store.writing():
                for n in range(first, min(events, first + FILL_BATCH)):
                    ts = iso_utc(ws.now())
                    ws.store.append_event(ts, "bench", "bench.tick", None, None, {"n": n}, sign)
    finally:
        memory.close()
        del os.environ["XDG_CONFIG_HOME"]
    took = time.perf_counter() - start
    print(f"chain: {events:,} events appended in {took:.1f} s", file=sys.stderr)
    _verify(root, "--full")
    return root


def _open(root: Path) -> Memory:
    """A ``Memory`` on ``root`` signing with its key, kept open for the rounds: the chain's
    part is then timed without the first call's imports and key file."""
    os.environ["XDG_CONFIG_HOME"] = _config(root)
    try:
        memory = Memory.open(root, agent="bench")
        memory.workspace.signing.signing_key()
    finally:
        del os.environ["XDG_CONFIG_HOME"]
    return memory


def _walk(memory: Memory) -> float:
    """``NEW`` events added, then the time of the chain's routine walk over them and of its
    checkpoint, in this process (what a verify pays for the chain)."""
    _emit(memory, NEW)
    start = time.perf_counter()
    found = verify_chain(memory.workspace)
    took = time.perf_counter() - start
    assert (found.checked, found.violations) == (NEW, []), found
    return took


def _emit(memory: Memory, count: int) -> None:
    for n in range(count):
        memory.emit("bench.tock", {"n": n})


def _verify(root: Path, *flags: str) -> tuple[float, dict[str, object]]:
    took, out = _memkeeper(root, "verify", "--json", *flags)
    found: dict[str, object] = json.loads(out)
    assert found["checkpoint"] == found["events"], found  # a key signed it
    return took, found


def _config(root: Path) -> str:
    return str(root.parent / f"{root.name}-config")


def _memkeeper(root: Path, *args: str) -> tuple[float, bytes]:
    """``memkeeper ARGS`` in ``root`` with its key: wall time and stdout."""
    exe = str(Path(sys.executable).parent / "memkeeper")
    env = {**bench_env(root.parent / "pycache", as_is=False), "XDG_CONFIG_HOME": _config(root)}
    start = time.perf_counter()
    done = subprocess.run([exe, *args], cwd=root, env=env, capture_output=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        detail = (done.stdout + done.stderr).decode(errors="replace")
        raise RuntimeError(
            f"memkeeper {' '.join(args)} in {root}: exit {done.returncode}: {detail}"
        )
    return took, done.stdout
