"""The Claude Code gate served by `memkeeper watch` over HTTP against the command hook, per
tool call, from the hook's start to its answer (issue 23 item 6).

    .venv/bin/python -m bench.gate_http [--runs 40] [--claude-calls 15] [--claude-bin CLAUDE]
        [--json]

Two initialised copies of sample-repo, both with ``install-hooks claude-code --served``: in
one ``memkeeper watch`` serves the gate, in the other no daemon runs. Per round, in turn
(``bench.stats.interleave``), for a denied whole-file write of CLAUDE.md and an allowed edit
of an unmanaged file:

* the command hook where no daemon serves — the installed ``sh -c`` line, spawned and waited
  for (its guard takes the lock, then Python answers);
* the served gate's POST (a new connection each time, as Claude Code makes) and the command
  hook's guard alone, which steps aside (sh + ``flock``), each timed alone;
* both at once, as Claude Code runs the two hooks of an event: the guard spawned, the POST
  made, then the guard waited for — the figure the goal is about (≤ 10 ms median).

Every answer is checked first: the served one byte for byte the command hook's. Then, with
the real Claude Code CLI (``tests.e2e.claudecli``; skipped without it), sessions of
``--claude-calls`` Edits each, served and unserved in turn, with ``--debug-file``: each
PreToolUse from Claude Code's ``HTTP hook POST`` line (both hooks start then) to the later of
the two hooks' ends, as its log has them (millisecond stamps).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.fixture import bench_env, sample_copy
from bench.stats import interleave
from memkeeper.fs import gateconfig
from memkeeper.install.hooks import CLAUDE_COMMAND

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    Step = Callable[[], list[float]]

GOAL_MS = 10.0
SESSION = "5f0c2b9e-8a41-4c6f-9d3e-0b7a1c2d3e4f"
HARMLESS = "src/inventory/cache.py"


def payloads(root: Path) -> dict[str, bytes]:
    base = {"session_id": SESSION, "cwd": str(root), "hook_event_name": "PreToolUse"}
    write = {"file_path": str(root / "CLAUDE.md"), "content": "# Memory\n\nRewritten.\n"}
    edit = {"file_path": str(root / HARMLESS), "old_string": "TTL", "new_string": "TTL_S"}
    return {
        "deny": json.dumps({**base, "tool_name": "Write", "tool_input": write}).encode(),
        "allow": json.dumps({**base, "tool_name": "Edit", "tool_input": edit}).encode(),
    }


def prepared(root: Path, env: Mapping[str, str]) -> gateconfig.GateConfig:
    memkeeper = str(Path(sys.executable).parent / "memkeeper")
    for argv in (["init"], ["install-hooks", "claude-code", "--served"]):
        subprocess.run([memkeeper, *argv], cwd=root, env=env, check=True, capture_output=True)
    config = gateconfig.load(str(root / ".memkeeper"))
    assert config is not None
    return config


class Daemon:
    """``memkeeper watch`` in ``root``, serving the gate once started."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        memkeeper = str(Path(sys.executable).parent / "memkeeper")
        self.proc = subprocess.Popen(
            [memkeeper, "watch", "--json"], cwd=root, env=env, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if json.loads(line)["action"] == "serving":
                return
        raise RuntimeError("memkeeper watch ended before it served the gate")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def post(config: gateconfig.GateConfig, body: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    connection = http.client.HTTPConnection(gateconfig.HOST, config.port, timeout=30)
    headers = {"Authorization": f"Bearer {config.token}", "Content-Type": "application/json"}
    connection.request("POST", "/hook/claude-code", body, headers)
    response = connection.getresponse()
    answer = response.read()
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"the served gate answered {response.status}: {answer!r}")
    return time.perf_counter() - start, answer


def hook_env(root: Path, env: Mapping[str, str], claude: bool = True) -> dict[str, str]:
    """The command hook's environment as Claude Code sets it (``claude``: its session id)."""
    path = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # memkeeper on PATH
    out = {**env, "CLAUDE_PROJECT_DIR": str(root), "PATH": path}
    out.pop("MEMKEEPER_AGENT", None)
    if claude:
        out["CLAUDE_CODE_SESSION_ID"] = SESSION
    return out


def command(env: Mapping[str, str], body: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(
        ["/bin/sh", "-c", CLAUDE_COMMAND], input=body, env=env, capture_output=True, check=True
    )
    return time.perf_counter() - start, done.stdout


def both(config: gateconfig.GateConfig, env: Mapping[str, str], body: bytes) -> float:
    """The two hooks of one event at once, as Claude Code runs them: until both answered."""
    start = time.perf_counter()
    guard = subprocess.Popen(
        ["/bin/sh", "-c", CLAUDE_COMMAND],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    post(config, body)
    out, _ = guard.communicate(body)
    took = time.perf_counter() - start
    if out:
        raise RuntimeError(f"the command hook did not step aside: {out!r}")
    return took


def checked(served: Path, config: gateconfig.GateConfig, env: Mapping[str, str]) -> list[str]:
    """Each payload's answer through the served gate, the same as the command hook's."""
    notes = []
    for what, body in payloads(served).items():
        answer = post(config, body)[1]
        if answer != command(hook_env(served, env, claude=False), body)[1]:
            raise RuntimeError(f"{what}: the served answer differs from the command hook's")
        if (b'"deny"' in answer) != (what == "deny"):
            raise RuntimeError(f"{what}: unexpected answer {answer!r}")
        notes.append(f"{what}: {answer.decode()[:70] or '(silent allow)'}")
    return notes


def components(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    env = bench_env(work / "pycache", as_is=False)
    served, unserved = sample_copy(work / "served"), sample_copy(work / "unserved")
    config = prepared(served, env)
    prepared(unserved, env)
    daemon = Daemon(served, env)
    try:
        notes = checked(served, config, env)
        steps: list[tuple[str, Callable[[], list[float]]]] = []
        for what in ("deny", "allow"):
            near, far = payloads(served)[what], payloads(unserved)[what]
            down, up = hook_env(unserved, env), hook_env(served, env)
            steps += [
                (f"command hook, no daemon: {what}", _timed(command, down, far)),
                (f"served: POST alone: {what}", _timed(post, config, near)),
                (f"served: guard alone (sh + flock): {what}", _timed(command, up, near)),
                (f"served: both at once: {what}", _both(config, up, near)),
            ]
        samples = interleave([step for _, step in steps], args.runs)
    finally:
        daemon.stop()
    return {
        "answers": notes,
        "rows": [summary(what, s) for (what, _), s in zip(steps, samples, strict=True)],
    }


def _both(config: gateconfig.GateConfig, env: Mapping[str, str], body: bytes) -> Step:
    return lambda: [both(config, env, body)]


def _timed(how: Callable[[Any, bytes], tuple[float, bytes]], on: Any, body: bytes) -> Step:
    return lambda: [how(on, body)[0]]


def summary(label: str, samples: Sequence[float]) -> dict[str, Any]:
    """Milliseconds: the median and the nearest-rank 95th percentile."""
    ordered = sorted(samples)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    median = statistics.median(ordered)
    return {"measure": label, "n": len(ordered), "median_ms": median * 1e3, "p95_ms": p95 * 1e3}


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| measure | n | median | p95 |", "| --- | --- | --- | --- |"]
    lines += [
        f"| {r['measure']} | {r['n']} | {r['median_ms']:.1f} ms | {r['p95_ms']:.1f} ms |"
        for r in rows
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.gate_http", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="rounds (40)")
    parser.add_argument(
        "--claude-calls", type=int, default=15, help="Edits per session (15; 0: none)"
    )
    parser.add_argument("--claude-sessions", type=int, default=2, help="per side (2)")
    parser.add_argument(
        "--claude-bin",
        default=None,
        help="the Claude Code CLI to drive (default: as tests.e2e.claudecli finds it)",
    )
    parser.add_argument("--dir", default=None, help="where the temp repositories go")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.claude_bin:  # read by tests.e2e.claudecli when it is first imported
        os.environ["MEMKEEPER_TEST_CLAUDE"] = args.claude_bin
    work = Path(tempfile.mkdtemp(prefix="memkeeper-gate-http-", dir=args.dir))
    try:
        result = components(args, work)
        if args.claude_calls:
            from bench.gate_claude import as_claude_sees_it

            result["claude"] = as_claude_sees_it(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = result["rows"] + result.get("claude", {}).get("rows", [])
    if args.json:
        print(json.dumps({**result, "goal_ms": GOAL_MS}, indent=2))
        return 0
    print(markdown(rows))
    for note in (*result["answers"], *result.get("claude", {}).get("notes", [])):
        print(f"- {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
