"""What guarding every replace against writers that take no lock costs a patch.

    .venv/bin/python -m bench.boundary [--patches 600]

Two worker processes patch one section of their own copy of sample-repo in turn, one patch
each per round (so both see the same disk and the same noise): one with the guard of
docs/reference.md §11 (a hard link, a re-read and a lease check before the rename, one more
lease check after it), one with the guard switched off. Prints the medians and the added
latency; the issue's goal is about 10% of a patch.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

WORKER = r"""
import shutil, subprocess, sys, tempfile, time
from memkeeper import Memory
from memkeeper.fs import atomic
from memkeeper.fs import files
if sys.argv[1] == "off":
    real = atomic.atomic_write
    atomic.atomic_write = lambda root, rel, data, **kw: real(root, rel, data)
root = tempfile.mkdtemp() + "/repo"
shutil.copytree(sys.argv[2], root)
subprocess.run(["git", "init", "-q", root], check=True)
memory = Memory.open(root, agent="bench")
section = memory.read("CLAUDE.md#build")
rev, count = section.rev, 0
print("ready", flush=True)
for _ in sys.stdin:
    started = time.perf_counter()
    body = section.content + f"- {count % 2}\n"
    rev = memory.patch("CLAUDE.md#build", body, expect_rev=rev).rev
    count += 1
    print(time.perf_counter() - started, flush=True)
"""


def measure(patches: int, sample: str) -> dict[str, list[float]]:
    workers = {
        mode: subprocess.Popen(
            [sys.executable, "-c", WORKER, mode, sample],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for mode in ("off", "on")
    }
    for worker in workers.values():
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready"
    times: dict[str, list[float]] = {mode: [] for mode in workers}
    for round_ in range(patches):
        order = list(workers.items())
        for mode, worker in order if round_ % 2 else reversed(order):
            assert worker.stdin is not None
            assert worker.stdout is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
            times[mode].append(float(worker.stdout.readline()))
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait(timeout=60)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patches", type=int, default=600)
    parser.add_argument("--sample", default="sample-repo")
    args = parser.parse_args(argv)
    times = measure(args.patches, args.sample)
    off, on = (statistics.median(times[mode]) for mode in ("off", "on"))
    print("| `Memory.patch`, in process | median | p90 |")
    print("| --- | --- | --- |")
    for mode, label in (("off", "guard off"), ("on", "guard on")):
        ordered = sorted(times[mode])
        p90 = ordered[int(len(ordered) * 0.9)]
        print(f"| {label} | {statistics.median(ordered) * 1e3:.2f} ms | {p90 * 1e3:.2f} ms |")
    print(
        f"\nadded by the guard: {(on - off) * 1e3:.2f} ms a patch = {100 * (on - off) / off:.1f}%"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
