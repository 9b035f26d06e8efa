"""The real Claude Code CLI run offline against ``fakemodel``'s scripted model, as the
live tests (``test_claude_live.py``) drive it: ``Session`` (a session with a known id and a
fresh HOME of its own: no user configuration leaks in), ``Conversation`` (prompts one at a
time on stdin), the script's steps ``bash`` and ``mcp``.

The CLI is found at ``$MEMKEEPER_TEST_CLAUDE``, else in ``$MEMKEEPER_AGENT_BIN`` (the agents
``.ci/run`` installs from npm), else ``.cache/agents/node_modules/.bin/claude`` (``npm install
--prefix .cache/agents @anthropic-ai/claude-code``), else ``claude`` on PATH (``CLAUDE``: None
where there is none). Its hooks, its Bash tool and
its MCP server run this checkout's ``memkeeper`` (first on PATH).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MEMKEEPER
from tests.e2e.fakemodel import Again, Body, FakeModel, Reply, Step, Tool, offers

INSTALLED = [
    Path(os.environ.get("MEMKEEPER_AGENT_BIN") or "/nonexistent") / "claude",
    Path(__file__).resolve().parents[2] / ".cache/agents/node_modules/.bin/claude",
]
CLAUDE = os.environ.get("MEMKEEPER_TEST_CLAUDE") or next(
    (str(path) for path in INSTALLED if path.exists()), shutil.which("claude")
)
TIMEOUT = 120  # seconds for one `claude -p` run (about 5 s here, plus the script's tools)
MCP_WAIT = 30  # seconds a script waits for memkeeper's MCP tools to be offered


@dataclass(frozen=True)
class Session:
    """One Claude Code session: its id, and where its configuration lives."""

    root: Path
    home: Path
    id: str

    @property
    def identity(self) -> str:
        return f"claude-code:{self.id}"

    def start(self, model: FakeModel, *more: str, prompt: str | None = "Follow the script.") -> Any:
        """``claude -p`` as this session, against ``model``: the running process. Without a
        ``prompt``, the prompts come as stream-json lines on its stdin (``Conversation``)."""
        assert CLAUDE is not None
        drop = ("ANTHROPIC_", "CLAUDE", "MEMKEEPER_", "CODEX_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        env |= {
            "PATH": f"{Path(MEMKEEPER).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",  # bypassPermissions as root
        }
        how = ["--output-format", "stream-json", "--verbose"]
        how += ["--permission-mode", "bypassPermissions", *more]
        if prompt is None:
            how += ["--input-format", "stream-json"]
        return subprocess.Popen(
            [CLAUDE, "-p", *([prompt] if prompt else []), *how],
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL if prompt else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, steps: Sequence[Step], *more: str) -> FakeModel:
        """One ``claude -p`` run to its end, the model following ``steps``: the model, with
        every request it was sent."""
        with FakeModel(steps) as model:
            finish(self.start(model, *more))
        return model


class Conversation:
    """A ``claude -p`` session that takes its prompts one at a time on stdin, so that
    something can happen between two of them (``with Conversation(process) as talk:``)."""

    def __init__(self, process: Any) -> None:
        self.process = process
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def say(self, prompt: str) -> None:
        """One prompt, answered to the end of its turn."""
        user = {"type": "user", "message": {"role": "user", "content": prompt}}
        self.process.stdin.write(json.dumps(user) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            assert line, f"claude -p ended during a turn: {self.process.stderr.read()[-2000:]}"
            if line.startswith("{") and json.loads(line).get("type") == "result":
                assert json.loads(line).get("subtype") == "success", line
                return

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.stdin.close()
        code = self.process.wait(timeout=TIMEOUT)
        self.reader.join(timeout=TIMEOUT)
        err = self.process.stderr.read()
        self.process.stdout.close()
        self.process.stderr.close()
        assert code == 0, err[-2000:]


def session(root: Path, tmp_path: Path) -> Session:
    """A new session in ``root`` with a fresh HOME of its own (its id given on the command
    line with ``--session-id``, so the test knows it before the session starts)."""
    sid = str(uuid.uuid4())
    home = tmp_path / f"home-{sid[:8]}"
    home.mkdir()
    return Session(root, home, sid)


def finish(process: Any) -> list[dict[str, Any]]:
    """Wait for a ``claude -p`` run; its stream-json lines. It must end well."""
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"claude -p did not finish in {TIMEOUT} s:\n{out[-2000:]}\n{err[-2000:]}")
    assert process.returncode == 0, f"claude -p exit {process.returncode}:\n{out[-3000:]}\n{err}"
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert lines, out[-3000:]
    assert lines[-1].get("subtype") == "success", out[-3000:]
    return lines


def bash(command: str) -> Tool:
    return Tool("Bash", {"command": command, "description": "as the script says"})


def mcp(tool: str, **arguments: Any) -> Step:
    """A call of memkeeper's MCP tool: ``claude -p`` does not wait for MCP servers, so until
    the request offers it, the model waits a second with Bash and asks again."""
    name = f"mcp__memkeeper__{tool}"
    waited: list[int] = []

    def call(body: Body) -> Reply | Again:
        # Claude Code 2.1.332 defers MCP tools: the request names them (a list the model may
        # load from) without offering their schemas; the CLI runs a call of one all the same.
        if offers(body, name) or name in json.dumps(body) or len(waited) >= MCP_WAIT:
            return Tool(name, arguments)
        waited.append(1)
        return Again(bash("sleep 1"))

    return call
