"""Benchmark memkeeper's core against the baselines its goals are stated in.

    .venv/bin/python -m bench.core [--runs 100] [--batches 30] [--batch-size 10] [--json]

Measures, in one run and each pair interleaved (A, B, A, B…) so both sides see the same noise:

1. CLI wall time: ``memkeeper read`` and ``memkeeper patch`` vs ``python -c pass``;
2. in-process ``Memory.patch`` rate vs a raw temp + fsync + rename + directory fsync loop —
   one writer, then ``--threads`` writers in one process, each on its own file (their commits
   share syncs: group commit), against as many threads of the raw loop;
3. ``Memory.patch`` latency on a 1 MB / 10,000-section file vs a 10 KB / 100-section one.

Prints the machine, the command and a Markdown table (or one JSON object with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench import machine
from bench.fixture import BIG, SMALL, Shell, make_repo, section_body
from bench.stats import Figure, Row, interleave, summarize, table
from memkeeper import MemkeeperError, Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

REF = "CLAUDE.md#build"
BODIES = (  # both differ from the sample's body, so every patch changes the file
    "\n- Python 3.11; dependencies pinned in `pyproject.toml`.\n- `make build` writes dist/.\n\n",
    "\n- Python 3.11; dependencies listed in `pyproject.toml`.\n- `make build` fills dist/.\n\n",
)
BARE = "`python -c pass`"


class CliPatch:
    """``memkeeper patch`` with the rev its previous run returned, alternating two bodies."""

    def __init__(self, shell: Shell, body_files: Sequence[Path], rev: int) -> None:
        self.shell, self.body_files, self.rev, self.turn = shell, body_files, rev, 0

    def __call__(self) -> list[float]:
        body = str(self.body_files[self.turn % len(self.body_files)])
        self.turn += 1
        argv = ("patch", REF, "--expect-rev", str(self.rev), "--body-file", body, "--json")
        took, out = self.shell.memkeeper_run(*argv)
        self.rev = int(json.loads(out)["rev"])
        return [took]


def cli_rows(shell: Shell, work: Path, runs: int) -> list[Row]:
    """Rounds of read, pass, patch, pass; both rows share the pooled ``pass`` samples."""
    body_files = [work / "body-a.md", work / "body-b.md"]
    for path, body in zip(body_files, BODIES, strict=True):
        path.write_text(body, encoding="utf-8")
    rev = int(json.loads(shell.memkeeper_run("read", REF, "--json")[1])["rev"])

    def read() -> list[float]:
        return [shell.memkeeper_run("read", REF, "--json")[0]]

    def bare() -> list[float]:
        return [shell.run([sys.executable, "-c", "pass"])[0]]

    steps: list[Callable[[], Sequence[float]]] = [
        read,
        bare,
        CliPatch(shell, body_files, rev),
        bare,
    ]
    reads, bare1, patches, bare2 = interleave(steps, runs)
    base = summarize(bare1 + bare2)
    read_label = f"`memkeeper read {REF} --json` wall time"
    patch_label = f"`memkeeper patch {REF} --expect-rev N --body-file F --json` wall time"
    return [
        Row(read_label, BARE, "ms", summarize(reads), base, 3, "lower"),
        Row(patch_label, BARE, "ms", summarize(patches), base, 5, "lower"),
    ]


class MemPatch:
    """``Memory.patch`` calls on one section, alternating bodies, rev from the last result."""

    def __init__(self, memory: Memory, ref: str, bodies: Sequence[str], batch: int = 1) -> None:
        self.memory, self.ref, self.bodies, self.batch, self.turn = memory, ref, bodies, batch, 0
        self.rev = memory.read(ref).rev

    def __call__(self) -> list[float]:
        took = []
        for _ in range(self.batch):
            body = self.bodies[self.turn % len(self.bodies)]
            self.turn += 1
            start = time.perf_counter()
            self.rev = self.memory.patch(self.ref, body, expect_rev=self.rev).rev
            took.append(time.perf_counter() - start)
        return took


def durable_replace(path: str, data: bytes) -> None:
    """The floor for one durable write: temp file, fsync, rename, fsync of the directory."""
    temp = path + ".tmp"
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    directory = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class RawWrites:
    """``durable_replace`` of the same file bytes memkeeper writes, alternating, in batches."""

    def __init__(self, path: Path, versions: Sequence[bytes], batch: int) -> None:
        self.path, self.versions, self.batch, self.turn = str(path), versions, batch, 0

    def __call__(self) -> list[float]:
        took = []
        for _ in range(self.batch):
            data = self.versions[self.turn % len(self.versions)]
            self.turn += 1
            start = time.perf_counter()
            durable_replace(self.path, data)
            took.append(time.perf_counter() - start)
        return took


def rate_row(root: Path, batches: int, batch_size: int) -> Row:
    """Batches of ``Memory.patch`` and of raw durable writes of the same bytes, in turn."""
    memory = Memory.open(root, agent="bench")
    try:
        ours = MemPatch(memory, REF, BODIES, batch_size)
        versions = []
        for body in BODIES:  # learn the exact bytes each body gives the file
            ours.rev = memory.patch(REF, body, expect_rev=ours.rev).rev
            versions.append((root / "CLAUDE.md").read_bytes())
        raw = RawWrites(root / "bench-raw.md", versions, batch_size)
        patches, writes = interleave([ours, raw], batches, warmup=2)
    finally:
        memory.close()
    return Row(
        "`Memory.patch` rate, in-process (one section, alternating bodies)",
        "temp+fsync+rename+dir fsync of the same bytes",
        "ops/s",
        summarize(patches),
        summarize(writes),
        1.0,
        "higher",
    )


THREAD_REFS = (
    REF,
    "AGENTS.md#handoff-rules",
    "memory/architecture.md#storage",
    "memory/bench.md#log",
)


class Together:
    """``threads`` threads each running its own step ``batch`` times at once; every
    operation's share of the wall time (the aggregate rate's reciprocal), per operation."""

    def __init__(self, steps: Sequence[Callable[[], object]], batch: int) -> None:
        self.steps, self.batch = steps, batch

    def __call__(self) -> list[float]:
        import threading

        gate = threading.Barrier(len(self.steps) + 1)

        def run(step: Callable[[], object]) -> None:
            gate.wait()
            for _ in range(self.batch):
                step()

        threads = [threading.Thread(target=run, args=(step,)) for step in self.steps]
        for thread in threads:
            thread.start()
        gate.wait()
        start = time.perf_counter()
        for thread in threads:
            thread.join()
        total = len(self.steps) * self.batch
        return [(time.perf_counter() - start) / total] * total


def threads_row(root: Path, threads: int, batches: int, batch_size: int) -> Row:
    """``threads`` writers in one process, each patching its own file, vs as many threads
    of raw durable writes, each to its own file: the aggregate rates, interleaved."""
    (root / "memory" / "bench.md").write_text("# Bench\n\n## Log\n\nNothing yet.\n")
    memories = [Memory.open(root, agent=f"bench-{n}") for n in range(threads)]
    try:
        ours = [
            MemPatch(m, THREAD_REFS[n % len(THREAD_REFS)], BODIES) for n, m in enumerate(memories)
        ]
        versions = [(root / ref.partition("#")[0]).read_bytes() for ref in THREAD_REFS]
        raws = [
            RawWrites(root / f"bench-raw-{n}.md", [versions[n % len(versions)], b"x\n"], 1)
            for n in range(threads)
        ]
        patches, writes = interleave(
            [Together(ours, batch_size), Together(raws, batch_size)], batches, warmup=2
        )
    finally:
        for memory in memories:
            memory.close()
    return Row(
        f"`Memory.patch` rate, {threads} threads in one process (each its own file)",
        f"{threads} threads of temp+fsync+rename+dir fsync, each its own file",
        "ops/s",
        summarize(patches),
        summarize(writes),
        1.0,
        "higher",
    )


def size_row(root: Path, runs: int) -> Row:
    """``Memory.patch`` of the middle section of the big file and of the small one, in turn."""
    big_size, small_size = (root / BIG).stat().st_size, (root / SMALL).stat().st_size
    memory = Memory.open(root, agent="bench")
    try:
        big = MemPatch(memory, f"{BIG}#note-05000", [section_body(5000, v) for v in "ab"])
        small = MemPatch(memory, f"{SMALL}#note-00050", [section_body(50, v) for v in "ab"])
        bigs, smalls = interleave([big, small], runs)
    finally:
        memory.close()
    return Row(
        f"`Memory.patch` latency, {big_size / 1e6:.2f} MB / 10,000 sections (middle one)",
        f"{small_size / 1e3:.1f} KB / 100 sections",
        "ms",
        summarize(bigs),
        summarize(smalls),
        60,
        "lower",
    )


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-", dir=args.dir))
    try:
        shell = make_repo(work, args.env_as_is)
        _progress(f"repo in {shell.root}; CLI: {args.runs} rounds of read, pass, patch, pass")
        rows = cli_rows(shell, work, args.runs)
        _progress(f"in-process: {args.batches} rounds of {args.batch_size} patches, writes")
        rows.append(rate_row(shell.root, args.batches, args.batch_size))
        _progress(f"in-process, {args.threads} threads: {args.batches} rounds of both")
        rows.append(threads_row(shell.root, args.threads, args.batches, args.batch_size))
        _progress(f"size: {args.runs} rounds of big, small")
        rows.append(size_row(shell.root, args.runs))
        facts = machine.describe(str(work))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return {"machine": facts, "command": _command(args), "rows": rows}


def _command(args: argparse.Namespace) -> str:
    as_is = " --env-as-is" if args.env_as_is else ""
    return (
        f".venv/bin/python -m bench.core --runs {args.runs} --batches {args.batches} "
        f"--batch-size {args.batch_size} --threads {args.threads}{as_is}"
    )


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def figures(result: dict[str, Any]) -> list[Figure]:
    return [row.figure() for row in result["rows"]]


def report(result: dict[str, Any]) -> str:
    facts = machine.markdown(result["machine"])
    return f"{facts}\n\n`{result['command']}`\n\n{table(result['rows'])}\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.core", description="Benchmark memkeeper's core.")
    add = parser.add_argument
    add("--runs", type=int, default=100, help="rounds of the CLI and size comparisons (100)")
    add("--batches", type=int, default=30, help="rounds of in-process batches (30)")
    add("--batch-size", type=int, default=10, help="patches (and raw writes) per batch (10)")
    add("--threads", type=int, default=4, help="writers in one process, for group commit (4)")
    add("--dir", help="parent of the temp repository (default: $TMPDIR or /tmp)")
    add("--keep", action="store_true", help="keep the temp repository")
    add(
        "--env-as-is",
        action="store_true",
        help="do not cache bytecode for the timed commands (PYTHONDONTWRITEBYTECODE stays)",
    )
    add("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = measure(args)
    except (RuntimeError, MemkeeperError) as exc:  # say what failed, no traceback
        _progress(f"failed: {exc}")
        return 1
    if args.json:
        rows = [row.to_json() for row in result["rows"]]
        print(json.dumps({**result, "rows": rows}, indent=2, ensure_ascii=False))
    else:
        print(report(result), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
