"""The dashboard: event committed → message on ``/api/stream``, page load, server memory.

    .venv/bin/python -m bench.dashboard [--events 100] [--flood 10000] [--json]

``memkeeper serve --port 0`` runs in a copy of sample-repo. Latency: this process commits an
event (``Memory.emit``: another process than the server, as an agent's would be) and times
it until the same event arrives as a message on an open ``/api/stream``, ``--events`` times,
one at a time, 20 ms apart. Beside it, in turn, the same commit timed until a bare poll of
the log (``Memory.events(since=…)`` every 1 ms, in this process) sees it: the floor any
reader of the store has. Memory: the server's resident set size (``VmRSS``) once warm (after
the page loads and 1,000 more events), then after ``--flood`` more events were committed and
streamed to the open connection (goal: no growth per event). Page load (when Playwright and
Debian's chromium are installed), before the flood: from ``page.goto`` to the first full
render — the stream live and the claims, files and events tables filled — over 5 loads,
after one warm-up.
"""

from __future__ import annotations

import argparse
import json
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from bench.fixture import bench_env, sample_copy
from bench.stats import Figure, figure_table, summarize
from memkeeper import Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

MEMKEEPER = str(Path(sys.executable).parent / "memkeeper")
GOAL_P90_S = 1.0
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
# The first full render: the stream live and every table filled. Waited for with selectors,
# since the page's Content-Security-Policy forbids the string evaluation wait_for_function uses.
RENDERED = (
    '#conn[data-state="live"]',
    "#claims-body tr[data-claim]",
    "#files-list button[data-path]",
    "#events-body tr.ev",
)


class Server:
    """``memkeeper serve --port 0`` in ``root``; its base URL and token."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [MEMKEEPER, "serve", "--port", "0"],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip().removeprefix("memkeeper dashboard: ")
        parts = urlsplit(self.url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.token = parse_qs(parts.query)["token"][0]

    def rss_kib(self) -> int:
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as handle:
            line = next(line for line in handle if line.startswith("VmRSS:"))
        return int(line.split()[1])

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Listener:
    """An open ``/api/stream``: each message's event id and the moment it arrived."""

    def __init__(self, server: Server) -> None:
        import httpx

        self.arrived: queue.Queue[tuple[int, float]] = queue.Queue()
        self.count = 0
        headers = {"Authorization": f"Bearer {server.token}"}
        self._stream = httpx.stream("GET", f"{server.base}/api/stream", headers=headers,
                                    timeout=None)  # fmt: skip
        self._answer = self._stream.__enter__()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self._answer.iter_lines():
                if line.startswith("data:"):
                    event = json.loads(line.removeprefix("data:"))
                    self.count += 1
                    self.arrived.put((int(event["id"]), time.perf_counter()))
        except Exception:
            pass  # the server stopped

    def wait_for(self, event_id: int, timeout: float = 10.0) -> float:
        while True:
            got, at = self.arrived.get(timeout=timeout)
            if got == event_id:
                return at


def stream_latency(memory: Memory, listener: Listener, events: int) -> tuple[list[float], ...]:
    streamed, polled = [], []
    for n in range(events):
        start = time.perf_counter()
        event = memory.emit("bench.stream", {"n": n})
        streamed.append(listener.wait_for(event.id) - start)
        time.sleep(0.02)
        start = time.perf_counter()
        event = memory.emit("bench.poll", {"n": n})
        while not memory.events(since=event.id - 1, limit=1):
            time.sleep(0.001)
        polled.append(time.perf_counter() - start)
        listener.wait_for(event.id)  # drained before the next round
        time.sleep(0.02)
    return streamed, polled


def flood(memory: Memory, listener: Listener, count: int) -> None:
    last = 0
    for n in range(count):
        last = memory.emit("bench.flood", {"n": n}).id
    listener.wait_for(last, timeout=120)


def page_loads(server: Server, loads: int = 5) -> list[float] | str:
    """Seconds from ``goto`` to the first full render, or why it was not measured."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return "no chromium (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "no playwright (pip install playwright)"
    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        try:
            for n in range(loads + 1):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                start = time.perf_counter()
                page.goto(server.url)
                for selector in RENDERED:
                    page.wait_for_selector(selector, state="attached", timeout=30_000)
                if n:
                    times.append(time.perf_counter() - start)
                context.close()
        finally:
            browser.close()
    return times


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-dash-"))
    env = bench_env(work / "pycache", False)
    try:
        root = sample_copy(work / "repo")
        subprocess.run([MEMKEEPER, "init"], cwd=root, env=env, check=True, capture_output=True)
        memory = Memory.open(root, agent="bench")
        memory.claim("CLAUDE.md#build", ttl=3600, objective="benchmark the page")
        server = Server(root, env)
        try:
            listener = Listener(server)
            time.sleep(0.5)
            flood(memory, listener, 200)  # warm-up
            streamed, polled = stream_latency(memory, listener, args.events)
            logged = len(memory.events())
            loads = page_loads(server)
            flood(memory, listener, 1000)  # the heap settles after the page loads
            rss_before = server.rss_kib()
            flood(memory, listener, args.flood)
            rss_after = server.rss_kib()
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "events": args.events,
        "flood": args.flood,
        "streamed": streamed,
        "polled": polled,
        "rss_kib": [rss_before, rss_after],
        "page_loads": loads,
        "logged": logged,
    }


def figures(result: dict[str, Any]) -> list[Figure]:
    streamed, polled = summarize(result["streamed"]), summarize(result["polled"])
    before, after = result["rss_kib"]
    per_event = (after - before) * 1024 / result["flood"]
    rows = [
        Figure(
            f"event committed → message on `/api/stream` ({result['events']} events)",
            f"{streamed.median * 1e3:.1f} ms (p90 {streamed.p90 * 1e3:.1f})",
            f"a 1 ms poll of the log in process: {polled.median * 1e3:.1f} ms "
            f"(p90 {polled.p90 * 1e3:.1f})",
            f"{streamed.median / polled.median:.1f}x",
            "p90 ≤ 1 s (aim ≤ 200 ms)",
            streamed.p90 <= GOAL_P90_S,
        ),
        Figure(
            f"server memory after {result['flood']:,} more events streamed",
            f"{after / 1024:.1f} MiB ({per_event:+.1f} bytes per event)",
            f"before: {before / 1024:.1f} MiB",
            f"{after / before:.2f}x",
            "no growth per event",
            per_event < 64,
        ),
    ]
    loads = result["page_loads"]
    if isinstance(loads, str):
        rows.append(Figure("page load → first full render", f"not measured: {loads}", "—",
                           "—", "—", None))  # fmt: skip
    else:
        load = summarize(loads)
        rows.append(
            Figure(
                f"page load → first full render ({len(loads)} loads, chromium headless, "
                f"{result['logged']} events in the log)",
                f"{load.median * 1e3:.0f} ms (p90 {load.p90 * 1e3:.0f})",
                "—",
                "—",
                "—",
                None,
            )
        )
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.dashboard", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100, help="timed events (100)")
    parser.add_argument("--flood", type=int, default=10_000, help="events for memory (10,000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import httpx  # noqa: F401
        import starlette  # noqa: F401
    except ImportError:
        print("bench.dashboard needs: pip install 'memkeeper[serve]' httpx", file=sys.stderr)
        return 1
    result = measure(args)
    found = figures(result)
    if args.json:
        print(json.dumps([f.to_json() for f in found], indent=2, ensure_ascii=False))
        return 0
    print(figure_table(found))
    print(f"\n`.venv/bin/python -m bench.dashboard --events {args.events} --flood {args.flood}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
