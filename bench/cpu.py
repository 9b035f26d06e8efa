"""Instructions per in-process operation, counted by valgrind: the CPU gauge that noise does
not move.

    .venv/bin/python -m bench.cpu [--few 50] [--many 250] [--json]

On a shared, noisy machine wall times of a CPU-bound path drift by ±25 % from run to run;
instruction counts do not. For each operation — ``Memory.patch`` of one section (alternating
bodies), ``Memory.claim`` + ``Memory.release``, ``Memory.read`` of one section — a child
Python runs it ``--few`` and then ``--many`` times under ``valgrind --tool=callgrind`` (user
space only: syscalls and waits are not counted), on a fresh copy of sample-repo each (made a
store-backed root by one patch first); the
difference over ``many - few`` is the steady-state cost of one operation, start-up and first
calls cancelled out. Needs ``apt-get install valgrind``; slow (~1 min per operation).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.fixture import SAMPLE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

CHILD = """
import sys
from memkeeper import Memory

root, what, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
memory = Memory.open(root, agent="bench")
ref = "CLAUDE.md#build"
section = memory.read(ref)
rev, bodies = section.rev, [section.content + "- a\\n", section.content + "- b\\n"]
rev = memory.patch(ref, bodies[1], expect_rev=rev).rev  # the store exists, the file indexed
for n in range(count):
    if what == "patch":
        rev = memory.patch(ref, bodies[n % 2], expect_rev=rev).rev
    elif what == "claim":
        memory.release(memory.claim("src/inventory/", ttl=30).id)
    else:
        memory.read(ref)
memory.close()
"""
OPERATIONS = {
    "patch": "`Memory.patch` of one section (alternating bodies)",
    "claim": "`Memory.claim` + `Memory.release`",
    "read": "`Memory.read` of one section",
}
COLLECTED = re.compile(rb"Collected : (\d+)")


def instructions(work: Path, what: str, count: int) -> int:
    """User-space instructions of a child doing ``what`` ``count`` times on a fresh copy."""
    root = work / f"{what}-{count}"
    shutil.copytree(SAMPLE, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={work / 'callgrind.out'}",
            sys.executable,
            "-c",
            CHILD,
            str(root),
            what,
            str(count),
        ],
        capture_output=True,
        check=True,
    )
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"valgrind printed no count: {done.stderr[-500:]!r}")
    return int(found.group(1))


def measure(few: int, many: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="memkeeper-cpu-"))
    try:
        return {
            what: (instructions(work, what, many) - instructions(work, what, few)) / (many - few)
            for what in OPERATIONS
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.cpu", description=__doc__.split("\n")[0])
    parser.add_argument("--few", type=int, default=50, help="operations of the first run (50)")
    parser.add_argument("--many", type=int, default=250, help="operations of the second (250)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench.cpu: needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 1
    if args.many <= args.few:
        parser.error("--many must be larger than --few")
    per_op = measure(args.few, args.many)
    if args.json:
        print(json.dumps({"few": args.few, "many": args.many, "instructions": per_op}))
        return 0
    print(f"`.venv/bin/python -m bench.cpu --few {args.few} --many {args.many}`\n")
    print("| operation | instructions per operation (steady state) |")
    print("| --- | --- |")
    for what, label in OPERATIONS.items():
        print(f"| {label} | {per_op[what] / 1e6:.2f} M |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
