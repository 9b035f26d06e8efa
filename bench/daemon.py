"""The watch daemon's latencies, next to watchfiles' own raw event latency.

    .venv/bin/python -m bench.daemon [--runs 10] [--json]

A copy of sample-repo gets ``memkeeper init`` and a real ``memkeeper watch`` subprocess. Each
round, in turn: a file written in a scratch directory watched by a bare ``watchfiles.watch``
(same debounce and step as the daemon) until that watcher yields it; a human save of
``CLAUDE.md`` in place, and of ``AGENTS.md`` by rename (temp file + ``os.replace``), until
its ``section.external_edit`` is in the store; a claim by another agent (``Memory.claim``
returned, so committed) until ``memory/status.md`` shows it; a claim with a 1 s TTL from its
``expires_at`` until the page no longer shows it (the daemon's expiry sweep and re-render); a
completion (``emit`` called) until ``events --follow --type task.completed``, another
subprocess woken by the store's movement, has printed it (these last, in rounds of their own:
a follower woken by every commit would slow the other measures on a small machine).
Every wait polls every 1 ms from this process. Last, SIGTERM until the daemon has exited.
The first rounds are warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import machine
from bench.fixture import bench_env, sample_copy
from bench.stats import Figure, Summary, summarize
from memkeeper import Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

DEBOUNCE_MS, STEP_MS = 50, 20  # the daemon's defaults
POLL_S = 0.001
SETTLE_S = 0.3  # let the daemon finish re-rendering before the next trial


def until(check: Callable[[], bool], timeout: float = 10.0) -> float:
    """The ``perf_counter`` time at which ``check`` first held."""
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise RuntimeError("timed out waiting for the daemon")
        time.sleep(POLL_S)
    return time.perf_counter()


class RawWatcher:
    """A bare watchfiles watch on a scratch directory, stamping each batch as it arrives."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.stop = threading.Event()
        self.batches: queue.Queue[tuple[float, set[str]]] = queue.Queue()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        import watchfiles

        for changes in watchfiles.watch(
            self.directory, watch_filter=None, debounce=DEBOUNCE_MS, step=STEP_MS,
            stop_event=self.stop, rust_timeout=100, yield_on_timeout=True, recursive=False,
        ):  # fmt: skip
            self.batches.put((time.perf_counter(), {path for _, path in changes}))

    def trial(self, number: int) -> float:
        path = self.directory / f"raw-{number}.txt"
        start = time.perf_counter()
        path.write_text(f"{number}\n")
        while True:
            stamp, paths = self.batches.get(timeout=10)
            if str(path) in paths:
                return stamp - start


class Daemon:
    """``memkeeper watch`` in a subprocess, its output drained so it never blocks."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        command = [str(Path(sys.executable).parent / "memkeeper"), "watch", "--json"]
        self.proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE)
        self.started = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self.started.wait(10):
            raise RuntimeError("memkeeper watch did not start")

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if json.loads(line)["action"] == "started":
                self.started.set()

    def terminate(self) -> float:
        start = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(timeout=10) != 0:
            raise RuntimeError(f"memkeeper watch exited {self.proc.returncode} on SIGTERM")
        return time.perf_counter() - start


class Follower:
    """``memkeeper events --follow --type task.completed`` in a subprocess, each line it
    prints stamped as it arrives."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        command = [str(Path(sys.executable).parent / "memkeeper"), "events", "--follow"]
        command += ["--type", "task.completed", "--json"]
        self.proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE)
        self.lines: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.perf_counter(), json.loads(line)))

    def trial(self, memory: Memory, number: int) -> float:
        """Seconds from the ``emit`` of a completion (its commit included: the follower may
        print it before ``emit`` returns) until the follower printed it; another type
        emitted first, which it must not print."""
        memory.emit("task.started", {"n": number})
        start = time.perf_counter()
        memory.emit("task.completed", {"n": number})
        stamp, line = self.lines.get(timeout=10)
        if line["data"] != {"n": number}:
            raise RuntimeError(f"events --follow --type printed {line}")
        return stamp - start

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)


def save_trial(memory: Memory, root: Path, rel: str, by_rename: bool, number: int) -> float:
    """Save ``rel`` as an editor would; seconds until its external edit is in the store."""
    last = memory.events()[-1].id
    path = root / rel
    text = path.read_text() + f"\n- edit {number}\n"
    start = time.perf_counter()
    if by_rename:
        temp = path.with_name(path.name + ".swap-new")
        temp.write_text(text)
        os.replace(temp, path)
    else:
        path.write_text(text)
    seen = until(lambda: any(e.path == rel for e in memory.events(since=last)))
    time.sleep(SETTLE_S)
    return seen - start


def claim_trial(agent: Memory, root: Path, number: int) -> float:
    """Seconds from a committed claim until the status page shows it."""
    status = root / "memory/status.md"
    target = f"src/bench-{number}/"
    row = f"| agent-b | write | {target} |"  # the claims region's row, not an events line
    claim = agent.claim([target], ttl=60)
    start = time.perf_counter()
    seen = until(lambda: row in status.read_text())
    agent.release(claim.id)
    until(lambda: row not in status.read_text())
    time.sleep(SETTLE_S)
    return seen - start


def expiry_trial(agent: Memory, root: Path, number: int) -> float:
    """Seconds from a claim's ``expires_at`` until the status page no longer shows it."""
    status = root / "memory/status.md"
    row = f"| agent-b | write | src/expiring-{number}/ |"
    claim = agent.claim([f"src/expiring-{number}/"], ttl=1)
    until(lambda: row in status.read_text())
    until(lambda: row not in status.read_text(), timeout=15)
    gone = time.time()
    time.sleep(SETTLE_S)
    return gone - claim.expires_at


def measure(runs: int, warmup: int, work: Path) -> dict[str, Any]:
    root = sample_copy(work / "repo")
    (work / "raw").mkdir()
    env = bench_env(work / "pycache", as_is=False)
    exe = str(Path(sys.executable).parent / "memkeeper")
    subprocess.run([exe, "init", "--json"], cwd=root, env=env, check=True, capture_output=True)
    raw, daemon = RawWatcher(work / "raw"), Daemon(root, env)
    memory, agent = Memory(root, "bench-reader"), Memory(root, "agent-b")
    names = ("raw", "in_place", "rename", "claim", "expiry")
    samples: dict[str, list[float]] = {k: [] for k in names}
    try:
        for number in range(warmup + runs):
            took = {
                "raw": raw.trial(number),
                "in_place": save_trial(memory, root, "CLAUDE.md", False, number),
                "rename": save_trial(memory, root, "AGENTS.md", True, number),
                "claim": claim_trial(agent, root, number),
                "expiry": expiry_trial(agent, root, number),
            }
            for name, seconds in took.items():
                if number >= warmup:
                    samples[name].append(seconds)
        # last, on their own: a follower woken by every commit would slow the others
        follower = Follower(root, env)
        try:
            follow = [follower.trial(agent, number) for number in range(warmup + runs)]
        finally:
            follower.stop()
        samples["follow"] = follow[warmup:]
    finally:
        stop_s = daemon.terminate()
        raw.stop.set()
    summaries = {name: summarize(values) for name, values in samples.items()}
    return {"machine": machine.describe(str(work)), "runs": runs, "stop_s": stop_s,
            "summaries": summaries}  # fmt: skip


ROWS = [
    ("raw", "watchfiles alone: write → batch yielded (same debounce/step)", None),
    ("in_place", "human save in place → `section.external_edit` in the store", 0.300),
    ("rename", "human save by rename (temp + `os.replace`) → event in the store", 0.300),
    ("claim", "claim committed → `memory/status.md` shows it", 0.500),
    ("expiry", "claim's `expires_at` → gone from `memory/status.md` (wall clock)", None),
    ("follow", "completion `emit` called → printed by `events --follow --type`", 0.100),
]


def report(result: dict[str, Any], command: str) -> str:
    lines = [machine.markdown(result["machine"]), "", f"`{command}`", ""]
    lines += ["| measure | median | p90 | goal | met? |", "| --- | --- | --- | --- | --- |"]
    for key, label, goal in ROWS:
        s: Summary = result["summaries"][key]
        met = "—" if goal is None else ("yes" if s.p90 <= goal else "**no** (p90)")
        aim = ("baseline" if key == "raw" else "—") if goal is None else f"≤ {goal * 1000:.0f} ms"
        lines.append(
            f"| {label} | {s.median * 1e3:.0f} ms | {s.p90 * 1e3:.0f} ms | {aim} | {met} |"
        )
    stop = result["stop_s"] * 1e3
    lines.append(f"| SIGTERM → daemon exited (exit 0) | {stop:.0f} ms | — | ≤ 1000 ms | "
                 f"{'yes' if stop <= 1000 else '**no**'} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def figures(result: dict[str, Any]) -> list[Figure]:
    """Each latency with its goal; the two saves next to watchfiles' own raw latency."""
    got: dict[str, Summary] = result["summaries"]
    raw = got["raw"]
    rows = []
    for key, label, goal in ROWS[1:]:
        s = got[key]
        ours = f"{s.median * 1e3:.0f} ms (p90 {s.p90 * 1e3:.0f})"
        alternative, ratio = "—", "—"
        if key in ("in_place", "rename"):
            alternative = f"{ROWS[0][1]}: {raw.median * 1e3:.0f} ms (p90 {raw.p90 * 1e3:.0f})"
            ratio = f"{s.median / raw.median:.2f}x"
        aim = "—" if goal is None else f"p90 ≤ {goal * 1e3:.0f} ms"
        met = None if goal is None else s.p90 <= goal
        rows.append(Figure(f"daemon: {label}", ours, alternative, ratio, aim, met))
    stop = result["stop_s"]
    rows.append(Figure("daemon: SIGTERM → exited (exit 0)", f"{stop * 1e3:.0f} ms", "—", "—",
                       "≤ 1000 ms", stop <= 1.0))  # fmt: skip
    return rows


def command(args: argparse.Namespace) -> str:
    return f".venv/bin/python -m bench.daemon --runs {args.runs} --warmup {args.warmup}"


def run(args: argparse.Namespace) -> dict[str, Any]:
    """``measure`` in a temp dir (under ``args.dir``), removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix="memkeeper-daemon-", dir=args.dir))
    try:
        return {**measure(args.runs, args.warmup, work), "command": command(args)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.daemon", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="measured rounds (10)")
    parser.add_argument("--warmup", type=int, default=2, help="rounds dropped first (2)")
    parser.add_argument("--dir", help="parent of the temp dir (default: $TMPDIR or /tmp)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    summaries = {k: v.to_json() for k, v in result["summaries"].items()}
    return {**result, "summaries": summaries, "figures": [f.to_json() for f in figures(result)]}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print(report(result, result["command"]), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
