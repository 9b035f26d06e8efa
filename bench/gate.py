"""Gate decision latency per agent: one `memkeeper hook AGENT` call against `python -c pass`.

    .venv/bin/python -m bench.gate [--runs 30] [--json]

For every agent in ``memkeeper.gate.agents.AGENTS`` at run time that has payloads here (an
agent registered since is listed as skipped), two pre-tool payloads in that agent's own
shape, each its agent's hook command in a subprocess from spawn to exit: a whole-file write
of ``CLAUDE.md`` (denied, the reason naming ``memkeeper patch``) and a write of an unmanaged
file (allowed). Every call is checked once before it is timed, and all of them run in turn
with ``python -c pass`` (``bench.stats.interleave``), so the ratios see the same noise.
Goal (issue 11): each ≤ 3 times ``python -c pass``. The identity comes from the payload's
session, as an agent's hook has it (no ``MEMKEEPER_AGENT``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench.fixture import bench_env, sample_copy
from bench.stats import Row, interleave, summarize, table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

GOAL = 3.0
SESSION = "5f0c2b9e-8a41-4c6f-9d3e-0b7a1c2d3e4f"
MEMORY = "# Project memory\n\nRewritten from scratch.\n"
HARMLESS = "src/inventory/cache.py"
CODE = "TTL = 30\n"


class Call(NamedTuple):
    """One hook call: its argv after ``memkeeper`` and the JSON on its stdin."""

    argv: tuple[str, ...]
    stdin: bytes


def _add_file(path: str, text: str) -> str:
    lines = "".join(f"+{line}\n" for line in text.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


# Each agent's pre-tool payload for writing ``path`` whole with ``text`` (absolute paths where
# the agent sends them), in the shape each agent documents for its hooks.


def claude_code(root: Path, path: str, text: str) -> Call:
    # claude.md §2 (PreToolUse input; Write {file_path, content}), code.claude.com/docs hooks
    body = {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.claude/projects/repo/{SESSION}.jsonl",
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(root / path), "content": text},
        "tool_use_id": "toolu_01ABCdef",
    }
    return Call(("hook", "claude-code"), json.dumps(body).encode())


def codex(root: Path, path: str, text: str) -> Call:
    # codex.md §2: openai/codex codex-rs/hooks/src/events/pre_tool_use.rs command_input_json;
    # apply_patch with the raw patch in tool_input.command (apply_patch_tests.rs)
    body = {
        "session_id": SESSION,
        "turn_id": "019a2b3c-5555-7000-8000-000000000001",
        "transcript_path": "/home/dev/.codex/sessions/2026/10/05/rollout-019a2b3c.jsonl",
        "cwd": str(root),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.5-codex",
        "permission_mode": "default",
        "tool_name": "apply_patch",
        "tool_use_id": "call_9f2a1c",
        "tool_input": {"command": _add_file(path, text)},
    }
    return Call(("hook", "codex"), json.dumps(body).encode())


def gemini(root: Path, path: str, text: str) -> Call:
    # gemini.md §2: google-gemini/gemini-cli packages/core/src/hooks/types.ts HookInput;
    # write_file {file_path, content} (tools/definitions/base-declarations.ts)
    body = {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.gemini/tmp/3f2a/chats/session-{SESSION}.jsonl",
        "cwd": str(root),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-10-05T10:00:01.123Z",
        "tool_name": "write_file",
        "tool_input": {"file_path": str(root / path), "content": text},
    }
    return Call(("hook", "gemini"), json.dumps(body).encode())


def copilot(root: Path, path: str, text: str) -> Call:
    # copilot.md §2: github/docs hooks-reference.md preToolUse (camelCase, the event on argv);
    # create {path, file_text} with toolArgs a JSON string, as Copilot CLI sends it
    body = {
        "sessionId": SESSION,
        "timestamp": 1791176774359,
        "cwd": str(root),
        "toolName": "create",
        "toolArgs": json.dumps({"path": str(root / path), "file_text": text}),
    }
    return Call(("hook", "copilot", "--event", "preToolUse"), json.dumps(body).encode())


def cline(root: Path, path: str, text: str) -> Call:
    # cline.md §2 (A): the VS Code extension's PreToolUse, every parameter a string
    # (apps/vscode/src/sdk/hooks-adapter.ts); apply_patch {input} adding the file
    body = {
        "clineVersion": "4.2.0",
        "hookName": "PreToolUse",
        "timestamp": "1791176775012",
        "taskId": "01K9Z2X7R4C1B8D3E5F6G7H8J9",
        "workspaceRoots": [str(root)],
        "userId": "c0ffee00-1111-2222-3333-444455556666",
        "model": {"provider": "unknown", "slug": "unknown"},
        "preToolUse": {"toolName": "apply_patch", "parameters": {"input": _add_file(path, text)}},
    }
    return Call(("hook", "cline"), json.dumps(body).encode())


def cursor(root: Path, path: str, text: str) -> Call:
    # cursor.md §2: cursor.com/docs/hooks preToolUse {tool_name, tool_input, tool_use_id};
    # Write {file_path, content}
    body = {
        "conversation_id": SESSION,
        "generation_id": "0b1e2c3d-0000-4000-8000-000000000001",
        "model": "default",
        "hook_event_name": "preToolUse",
        "cursor_version": "2026.10.01-e373342",
        "workspace_roots": [str(root)],
        "user_email": "dev@example.com",
        "transcript_path": None,
        "session_id": SESSION,
        "cwd": str(root),
        "tool_name": "Write",
        "tool_use_id": "73da88f4-bc52-4b85-bdbe-34de8fa9c3e8",
        "tool_input": {"file_path": str(root / path), "content": text},
    }
    return Call(("hook", "cursor"), json.dumps(body).encode())


PAYLOADS: Mapping[str, Callable[[Path, str, str], Call]] = {
    "claude-code": claude_code,
    "codex": codex,
    "gemini": gemini,
    "copilot": copilot,
    "cline": cline,
    "cursor": cursor,
}


class Probe(NamedTuple):
    """One timed command and what it stands for."""

    label: str
    argv: tuple[str, ...]
    stdin: bytes


def registered() -> tuple[str, ...]:
    from memkeeper.gate.agents import AGENTS

    return tuple(AGENTS)


def probes(memkeeper: str, root: Path, agents: Sequence[str]) -> list[Probe]:
    """``python -c pass``, then a deny and an allow call for each agent."""
    out = [Probe("`python -c pass`", (sys.executable, "-c", "pass"), b"")]
    for agent in agents:
        for what, path, text in (("deny", "CLAUDE.md", MEMORY), ("allow", HARMLESS, CODE)):
            call = PAYLOADS[agent](root, path, text)
            out.append(Probe(f"{agent} {what}", (memkeeper, *call.argv), call.stdin))
    return out


def timed(probe: Probe, root: Path, env: Mapping[str, str]) -> tuple[float, bytes, int]:
    start = time.perf_counter()
    done = subprocess.run(
        probe.argv, cwd=root, env=env, input=probe.stdin, capture_output=True, check=False
    )
    return time.perf_counter() - start, done.stdout + done.stderr, done.returncode


def check(probe: Probe, root: Path, env: Mapping[str, str]) -> str:
    """The call's answer, once, before timing: a deny names ``memkeeper patch``, an allow
    does not; ``RuntimeError`` otherwise (a benchmark of the wrong decision says nothing)."""
    _, out, code = timed(probe, root, env)
    denied = b"memkeeper patch" in out
    if probe.label.endswith(" deny") != denied:
        raise RuntimeError(f"{probe.label}: unexpected answer (exit {code}): {out.decode()}")
    return f"exit {code}, {out.decode().strip()[:60]}"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    known = registered()
    agents = [a for a in known if a in PAYLOADS]
    work = Path(tempfile.mkdtemp(prefix="memkeeper-gate-", dir=args.dir))
    try:
        root = sample_copy(work / "repo")
        env = bench_env(work / "pycache", as_is=False)
        env.pop("MEMKEEPER_AGENT", None)  # the identity comes from the payload's session
        memkeeper = str(Path(sys.executable).parent / "memkeeper")
        subprocess.run([memkeeper, "init"], cwd=root, env=env, check=True, capture_output=True)
        found = probes(memkeeper, root, agents)
        answers = {p.label: check(p, root, env) for p in found[1:]}

        def step(probe: Probe) -> Callable[[], list[float]]:
            return lambda: [timed(probe, root, env)[0]]

        samples = interleave([step(p) for p in found], args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = summarize(samples[0])
    rows = [
        Row(
            f"`memkeeper hook {p.label}`",
            "`python -c pass`",
            "ms",
            summarize(s),
            base,
            GOAL,
            "lower",
        )
        for p, s in zip(found[1:], samples[1:], strict=True)
    ]
    return {
        "agents": agents,
        "skipped": [a for a in known if a not in PAYLOADS],
        "answers": answers,
        "rows": rows,
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.gate", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="rounds (30)")
    parser.add_argument("--dir", default=None, help="where the temp repository goes")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = measure(args)
    if args.json:
        rows = [row.to_json() for row in result["rows"]]
        print(json.dumps({**result, "rows": rows}, indent=2))
        return 0
    print(table(result["rows"]))
    if result["skipped"]:
        print(f"\nskipped (registered, no payload here yet): {', '.join(result['skipped'])}")
    print("\nanswers checked before timing:")
    for label, answer in result["answers"].items():
        print(f"- {label}: {answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
