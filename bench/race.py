"""The racing processes of ``bench.lostupdates``: each adds its lines to one section.

A ``Crew`` of spawned processes is started once; for each race every process gets the same
``Task``, they all wait at a barrier, then run it and report their retries. ``naive`` is what
an agent's Read and Write tools do to the whole file; ``with_cas`` is memkeeper's
read → ``patch(expect_rev=…)`` with a retry on ``Conflict`` (variant ``merge``: the same with
``merge=True``, so a stale patch that touches other lines, or only adds lines where another
added, lands without a retry).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
from typing import Literal, NamedTuple

from memkeeper import Conflict, Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from multiprocessing.context import SpawnContext
    from multiprocessing.queues import Queue
    from multiprocessing.synchronize import Barrier

Variant = Literal["naive", "atomic", "memkeeper", "merge"]
VARIANTS: tuple[Variant, ...] = ("naive", "atomic", "memkeeper", "merge")
WITH_MEMKEEPER = ("memkeeper", "merge")
FILE, HEADING, REF = "CLAUDE.md", "## Testing", "CLAUDE.md#testing"


class Task(NamedTuple):
    variant: Variant
    root: str
    updates: int
    think_s: float


def update_line(worker: int, number: int) -> str:
    return f"- update {worker}.{number} from the race"


def insert_line(text: str, line: str) -> str:
    """``text`` with ``line`` last in the Testing section, as an agent rewriting the file would.

    A file read while another process had truncated it has no such section: the agent then
    writes what it saw plus the section, as it would.
    """
    lines = text.splitlines(keepends=True)
    if HEADING + "\n" not in lines:
        return f"{text}\n{HEADING}\n\n{line}\n"
    start = lines.index(HEADING + "\n")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, line + "\n")
    return "".join(lines)


def naive(task: Task, worker: int) -> int:
    """Read-modify-write of the whole file, ``updates`` times; no retries, so returns 0."""
    path = os.path.join(task.root, FILE)
    for number in range(task.updates):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        time.sleep(task.think_s)
        new = insert_line(text, update_line(worker, number))
        target = f"{path}.{worker}.tmp" if task.variant == "atomic" else path
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(new)
        if target != path:
            os.replace(target, path)
    return 0


def with_cas(task: Task, worker: int) -> int:
    """Read, think, patch at the read's rev; on ``Conflict`` start over. Returns the retries."""
    memory, retries = Memory.open(task.root, agent=f"agent-{worker}"), 0
    try:
        for number in range(task.updates):
            while True:
                section = memory.read(REF)
                time.sleep(task.think_s)
                body = section.content.rstrip("\n") + f"\n{update_line(worker, number)}\n\n"
                try:
                    memory.patch(REF, body, expect_rev=section.rev, merge=task.variant == "merge")
                    break
                except Conflict:
                    retries += 1
    finally:
        memory.close()
    return retries


def serve(worker: int, tasks: Queue[Task | None], barrier: Barrier, done: Queue[int | str]) -> None:
    """One racing process: for each task, wait for the others at the barrier, then run it;
    report its retries, or what went wrong."""
    while (task := tasks.get()) is not None:
        barrier.wait()
        try:
            cas = task.variant in WITH_MEMKEEPER
            done.put(with_cas(task, worker) if cas else naive(task, worker))
        except Exception as exc:  # the parent says what failed and stops the run
            done.put(f"worker {worker}, {task.variant}: {type(exc).__name__}: {exc}")


class Crew:
    """``processes`` spawned workers kept for every race (no start-up inside the timing)."""

    def __init__(self, processes: int) -> None:
        ctx: SpawnContext = multiprocessing.get_context("spawn")
        self.barrier = ctx.Barrier(processes + 1)
        self.done: Queue[int | str] = ctx.Queue()
        self.tasks: list[Queue[Task | None]] = [ctx.Queue() for _ in range(processes)]
        self.workers = [
            ctx.Process(target=serve, args=(w, q, self.barrier, self.done), daemon=True)
            for w, q in enumerate(self.tasks)
        ]
        for process in self.workers:
            process.start()

    def race(self, task: Task) -> tuple[int, float]:
        """Every worker runs ``task`` at once; total retries and seconds until all are done."""
        for tasks in self.tasks:
            tasks.put(task)
        self.barrier.wait(timeout=120)
        start = time.perf_counter()
        try:
            answers = [self.done.get(timeout=600) for _ in self.workers]
        except queue.Empty:
            raise RuntimeError("a racing process did not finish within 600 s") from None
        took = time.perf_counter() - start
        if failed := [a for a in answers if isinstance(a, str)]:
            raise RuntimeError("; ".join(failed))
        return sum(a for a in answers if isinstance(a, int)), took

    def close(self) -> None:
        for tasks in self.tasks:
            tasks.put(None)
        for process in self.workers:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
