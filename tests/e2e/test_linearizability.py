"""Linearizability of compare-and-swap (issue 6, item 2): the checker itself on hand-made and
simulated histories, then real histories of concurrent processes reading and patching two
sections through the Python API and through the CLI."""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper import Conflict, Memory
from tests.conftest import run_cli
from tests.linearizability import (
    Op,
    State,
    cas_failed,
    cas_ok,
    cas_pending,
    check,
    read,
)

if TYPE_CHECKING:
    import pytest

    from tests.etcd_cluster import Cluster

START = State(1, "v0")
A = {"a": START}

# -- the checker on hand-made histories --------------------------------------------------------


def test_an_empty_history_is_linearizable() -> None:
    assert check([], {}).ok


def test_sequential_reads_and_swaps_are_linearizable() -> None:
    history = [
        read(1, "a", 0, 1, 1, "v0"),
        cas_ok(1, "a", 2, 3, 1, "v1", 2),
        cas_failed(2, "a", 4, 5, 1, "v2", State(2, "v1")),
        read(2, "a", 6, 7, 2, "v1"),
    ]
    assert check(history, A).ok


def test_two_concurrent_swaps_from_one_rev_one_wins_and_the_other_sees_it() -> None:
    history = [
        cas_ok(1, "a", 0, 10, 1, "x", 2),
        cas_failed(2, "a", 1, 9, 1, "y", State(2, "x")),
    ]
    assert check(history, A).ok


def test_a_read_concurrent_with_a_swap_may_see_either_side() -> None:
    swap = cas_ok(1, "a", 0, 10, 1, "x", 2)
    assert check([swap, read(2, "a", 5, 6, 1, "v0")], A).ok
    assert check([swap, read(2, "a", 5, 6, 2, "x")], A).ok


def test_a_lost_update_is_rejected() -> None:
    history = [
        cas_ok(1, "a", 0, 10, 1, "x", 2),
        cas_ok(2, "a", 1, 9, 1, "y", 2),  # both swapped from rev 1: one overwrote the other
    ]
    verdict = check(history, A)
    assert not verdict.ok
    assert verdict.key == "a"


def test_a_stale_read_after_a_swap_returned_is_rejected() -> None:
    history = [cas_ok(1, "a", 0, 1, 1, "x", 2), read(2, "a", 2, 3, 1, "v0")]
    assert not check(history, A).ok


def test_a_duplicate_rev_is_rejected() -> None:
    history = [
        cas_ok(1, "a", 0, 1, 1, "x", 2),
        cas_ok(2, "a", 2, 3, 2, "y", 2),  # the register was at 2: the swap must yield 3
    ]
    assert not check(history, A).ok


def test_a_failed_swap_that_saw_a_state_never_written_is_rejected() -> None:
    history = [cas_failed(1, "a", 0, 1, 7, "x", State(1, "forged"))]
    assert not check(history, A).ok


def test_a_failed_swap_at_the_current_rev_is_rejected() -> None:
    assert not check([cas_failed(1, "a", 0, 1, 1, "x", START)], A).ok


def test_a_swap_to_the_same_value_keeps_the_rev() -> None:
    assert check([cas_ok(1, "a", 0, 1, 1, "v0", 1), read(1, "a", 2, 3, 1, "v0")], A).ok
    assert not check([cas_ok(1, "a", 0, 1, 1, "v0", 2)], A).ok


def test_a_swap_that_never_returned_may_or_may_not_have_happened() -> None:
    pending = cas_pending(1, "a", 0, 1, "x")
    assert check([pending, read(2, "a", 5, 6, 2, "x")], A).ok
    assert check([pending, read(2, "a", 5, 6, 1, "v0")], A).ok
    assert not check([pending, read(2, "a", 5, 6, 2, "y")], A).ok


def test_keys_are_checked_apart_and_the_bad_one_is_named() -> None:
    history = [
        read(1, "a", 0, 1, 1, "v0"),
        cas_ok(1, "b", 0, 1, 1, "x", 2),
        read(2, "b", 2, 3, 1, "v0"),
    ]
    verdict = check(history, {"a": START, "b": START})
    assert (verdict.ok, verdict.key) == (False, "b")
    assert "read b" in verdict.explain()


# -- the checker on simulated histories ----------------------------------------------------


def simulated(seed: int, processes: int, per_process: int) -> tuple[list[Op], dict[str, State]]:
    """A history of a real atomic register: each call takes effect at one instant inside its
    interval, and processes overlap heavily."""
    rng = random.Random(seed)
    slots = []
    for process in range(processes):
        clock = rng.randrange(50)
        for _ in range(per_process):
            point = clock + rng.randrange(1, 60)
            slots.append((point, process, clock, point + rng.randrange(1, 60)))
            clock = slots[-1][3] + rng.randrange(10)
    registers = {"a": START, "b": START}
    last: dict[tuple[int, str], int] = {}
    history = []
    for point, process, invoked, returned in sorted(slots):
        key = rng.choice("ab")
        now = registers[key]
        if (process, key) not in last or rng.random() < 0.5:
            history.append(read(process, key, invoked, returned, now.rev, now.value))
            last[process, key] = now.rev
            continue
        expect, value = last.pop((process, key)), f"p{process}@{point}"
        if expect != now.rev:
            history.append(cas_failed(process, key, invoked, returned, expect, value, now))
            continue
        registers[key] = State(now.rev + 1, value)
        history.append(cas_ok(process, key, invoked, returned, expect, value, now.rev + 1))
    return history, {"a": START, "b": START}


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 12))
def test_every_history_of_an_atomic_register_is_accepted(
    seed: int, processes: int, per_process: int
) -> None:
    history, initial = simulated(seed, processes, per_process)
    verdict = check(history, initial)
    assert verdict.ok, verdict.explain()


def test_four_hundred_operations_of_eight_processes_check_in_well_under_a_second() -> None:
    history, initial = simulated(6, 8, 50)
    started = time.perf_counter()
    verdict = check(history, initial)
    assert verdict.ok, verdict.explain()
    assert time.perf_counter() - started < 1.0


def test_a_stale_read_at_the_end_of_four_hundred_operations_is_rejected() -> None:
    history, initial = simulated(6, 8, 50)
    assert any(op.kind == "cas" and op.ok and op.key == "a" for op in history)
    end = max(op.ends for op in history)
    verdict = check([*history, read(99, "a", end + 1, end + 2, 1, "v0")], initial)
    assert (verdict.ok, verdict.key, verdict.exhausted) == (False, "a", False)


# -- real histories ------------------------------------------------------------------------------

PATH = "memory/registers.md"
REFS = {"alpha": f"{PATH}#alpha", "beta": f"{PATH}#beta"}
DOCUMENT = "# Alpha\n\nstart alpha\n\n# Beta\n\nstart beta\n"


def initial_states(root: Path) -> dict[str, State]:
    (root / PATH).write_text(DOCUMENT)
    memory = Memory.open(root, agent="setup")
    try:
        return {key: _state(memory, ref) for key, ref in REFS.items()}
    finally:
        memory.close()


def _state(memory: Memory, ref: str) -> State:
    section = memory.read(ref)
    return State(section.rev, section.content)


def api_client(root: str, process: int, count: int, start: Any, out: str) -> None:
    """One process: its own ``Memory``, ``count`` recorded calls, a random mix of reads and
    read-then-patch; the history goes to ``out`` as JSON."""
    memory = Memory.open(root, agent=f"p{process}")
    _state(memory, REFS["alpha"])  # imports and the store, before the clock starts
    rng, history = random.Random(process), list[Op]()
    start.wait()
    while len(history) < count:
        key = rng.choice(sorted(REFS))
        invoked = time.time_ns()
        seen = _state(memory, REFS[key])
        history.append(read(process, key, invoked, time.time_ns(), seen.rev, seen.value))
        if len(history) < count and rng.random() < 0.6:
            history.append(
                api_patch(memory, process, key, seen.rev, f"\np{process}-{len(history)}\n\n")
            )
    memory.close()
    Path(out).write_text(json.dumps([to_json(op) for op in history]))


def api_patch(memory: Memory, process: int, key: str, expect: int, value: str) -> Op:
    invoked = time.time_ns()
    try:
        done = memory.patch(REFS[key], value, expect_rev=expect)
    except Conflict as lost:
        now = State(lost.current.rev, lost.current.content)
        return cas_failed(process, key, invoked, time.time_ns(), expect, value, now)
    return cas_ok(process, key, invoked, time.time_ns(), expect, value, done.rev)


def to_json(op: Op) -> dict[str, Any]:
    seen = None if op.seen is None else [op.seen.rev, op.seen.value]
    return {**{f: getattr(op, f) for f in Op.__slots__ if f != "seen"}, "seen": seen}


def from_json(row: dict[str, Any]) -> Op:
    seen = None if row["seen"] is None else State(*row["seen"])
    return Op(**{**row, "seen": seen})


def run_api_clients(root: Path, processes: int, count: int) -> list[Op]:
    context = multiprocessing.get_context("spawn")  # each child opens its own Memory
    start = context.Barrier(processes)
    outs = [root.parent / f"history-{p}.json" for p in range(processes)]
    clients = [
        context.Process(target=api_client, args=(str(root), p, count, start, str(outs[p])))
        for p in range(processes)
    ]
    for client in clients:
        client.start()
    for client in clients:
        client.join(120)
        assert client.exitcode == 0
    return [from_json(row) for out in outs for row in json.loads(out.read_text())]


def test_eight_processes_patching_two_sections_through_the_api_are_linearizable(
    sample: Path,
) -> None:
    initial = initial_states(sample)
    history = run_api_clients(sample, 8, 50)
    memory = Memory.open(sample, agent="auditor")
    finals = [final_read(memory, key) for key in REFS]

    verdict = check([*history, *finals], initial)

    assert len(history) == 400
    assert verdict.ok, verdict.explain()
    swaps = [op for op in history if op.kind == "cas"]
    assert any(op.ok for op in swaps)
    assert any(not op.ok for op in swaps)  # the processes did race
    patched = [e for e in memory.events() if e.type == "section.patched"]
    assert len(patched) == sum(op.ok for op in swaps)
    memory.verify()
    memory.close()


def final_read(memory: Memory, key: str) -> Op:
    """A read after every other call returned: the end state must be the last swap's."""
    invoked = time.time_ns()
    seen = _state(memory, REFS[key])
    return read(-1, key, invoked, time.time_ns(), seen.rev, seen.value)


def cli_client(root: Path, process: int, count: int) -> list[Op]:
    rng, history = random.Random(100 + process), list[Op]()
    while len(history) < count:
        key = rng.choice(sorted(REFS))
        invoked = time.time_ns()
        done = run_cli(root, "read", REFS[key], "--json").json
        history.append(read(process, key, invoked, time.time_ns(), done["rev"], done["content"]))
        if len(history) < count and rng.random() < 0.6:
            value = f"\ncli{process}-{len(history)}\n\n"
            history.append(cli_patch(root, process, key, done["rev"], value))
    return history


def cli_patch(root: Path, process: int, key: str, expect: int, value: str) -> Op:
    invoked = time.time_ns()
    args = ("patch", REFS[key], "--expect-rev", str(expect), "--body-file", "-", "--json")
    done = run_cli(root, *args, stdin=value)
    returned = time.time_ns()
    assert done.code in (0, 3), done.stdout + done.stderr
    if done.code == 0:
        return cas_ok(process, key, invoked, returned, expect, value, done.json["rev"])
    now = State(done.json["current"]["rev"], done.json["current"]["content"])
    return cas_failed(process, key, invoked, returned, expect, value, now)


def test_four_processes_patching_two_sections_through_the_cli_are_linearizable(
    sample: Path,
) -> None:
    initial = initial_states(sample)
    with ThreadPoolExecutor(4) as pool:  # the threads only wait: the processes are the CLI's
        parts = list(pool.map(lambda p: cli_client(sample, p, 10), range(4)))
    history = [op for part in parts for op in part]

    verdict = check(history, initial)

    assert len(history) == 40
    assert verdict.ok, verdict.explain()
    swaps = [op for op in history if op.kind == "cas"]
    assert any(op.ok for op in swaps)


def test_eight_processes_under_two_roots_sharing_etcd_are_linearizable(
    sample: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same history check across machines: two clones share one etcd store, four API
    processes under each; every history, read and swap alike, is one of the single copy."""
    host, port = cluster.endpoints[0]
    monkeypatch.setenv("MEMKEEPER_STORE", f"etcd://{host}:{port}/linearizability")
    other = sample.parent / "other"
    shutil.copytree(sample, other)
    (other / PATH).write_text(DOCUMENT)
    initial = initial_states(sample)
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(8)
    outs = [sample.parent / f"history-{p}.json" for p in range(8)]
    clients = [
        context.Process(
            target=api_client, args=(str(sample if p % 2 else other), p, 30, start, str(outs[p]))
        )
        for p in range(8)
    ]
    for client in clients:
        client.start()
    for client in clients:
        client.join(300)
        assert client.exitcode == 0
    history = [from_json(row) for out in outs for row in json.loads(out.read_text())]
    memory = Memory.open(other, agent="auditor")
    finals = [final_read(memory, key) for key in REFS]

    verdict = check([*history, *finals], initial)

    assert verdict.ok, verdict.explain()
    swaps = [op for op in history if op.kind == "cas"]
    assert any(op.ok for op in swaps)
    assert any(not op.ok for op in swaps)
    patched = [e for e in memory.events() if e.type == "section.patched"]
    assert len(patched) == sum(op.ok for op in swaps)
    memory.verify()
    memory.close()
