"""Issue 23's acceptance with the real Claude Code CLI (`@anthropic-ai/claude-code` from npm),
driven offline by a scripted model on 127.0.0.1 (``fakemodel``): what a session is told when
it starts and while it works reaches the model once; two sessions at once are two identities
in the events, their strict claims exclude each other and neither is blocked by its own; an
agent's own ``memkeeper`` call cannot change a human's section.

Each session runs ``claude -p`` in an initialised copy of sample-repo with
``memkeeper install-hooks claude-code --mcp``, a fresh HOME and CLAUDE_CONFIG_DIR (no user
configuration leaks in), and this checkout's ``memkeeper`` first on PATH (what its hooks,
its Bash tool and its MCP server run). The CLI is found at ``$MEMKEEPER_TEST_CLAUDE``, else
``.cache/agents/node_modules/.bin/claude`` (``npm install --prefix .cache/agents
@anthropic-ai/claude-code``, which ``.ci/run`` does), else ``claude`` on PATH; without it
these tests are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MEMKEEPER, run_cli
from tests.e2e.fakemodel import (
    Again,
    Body,
    FakeModel,
    Reply,
    Step,
    Text,
    Tool,
    Tools,
    last_tool_result,
    offers,
)
from tests.e2e.hooktables import events, initialised

CHECKOUT = Path(__file__).resolve().parents[2]
CLAUDE = (
    os.environ.get("MEMKEEPER_TEST_CLAUDE")
    or next(
        (str(p) for p in [CHECKOUT / ".cache/agents/node_modules/.bin/claude"] if p.exists()),
        None,
    )
    or shutil.which("claude")
)
pytestmark = pytest.mark.skipif(
    CLAUDE is None,
    reason="the Claude Code CLI is not installed: npm install --prefix .cache/agents "
    "@anthropic-ai/claude-code (or set MEMKEEPER_TEST_CLAUDE to its path)",
)
TIMEOUT = 120  # seconds for one `claude -p` run (about 5 s here, plus the script's tools)
MCP_WAIT = 30  # seconds a script waits for memkeeper's MCP tools to be offered
BUILD_LINE = "- `make build` produces the wheel in `dist/`."
TEST_LINE = "- Run `make test` before every commit."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """sample-repo, initialised, with Claude Code's hooks and MCP server installed."""
    root = initialised(tmp_path / "repo")
    installed = run_cli(root, "install-hooks", "claude-code", "--mcp")
    assert installed.code == 0, installed.stderr
    return root


@dataclass(frozen=True)
class Session:
    """One Claude Code session: its id, and where its configuration lives."""

    root: Path
    home: Path
    id: str

    @property
    def identity(self) -> str:
        return f"claude-code:{self.id}"

    def start(self, model: FakeModel, *more: str) -> Any:
        """``claude -p`` as this session, against ``model``: the running process."""
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
        return subprocess.Popen(
            [CLAUDE, "-p", "Follow the script.", *how],
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL,
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
        if offers(body, name) or len(waited) >= MCP_WAIT:
            return Tool(name, arguments)
        waited.append(1)
        return Again(bash("sleep 1"))

    return call


def test_a_session_is_told_who_it_is_and_what_waits_for_it_once(repo: Path, tmp_path: Path) -> None:
    sent = run_cli(repo, "send", "--to", "all", "--text", "Freeze the build section, please.")
    assert sent.code == 0, sent.stderr
    one = session(repo, tmp_path)
    model = one.run([bash("true"), Text("Done.")], "--session-id", one.id)

    first, second = model.sent(0), model.sent(1)
    assert f"You act here as {one.identity}." in first
    assert "memkeeper read FILE#KEY" in first  # how section-owned files are changed
    assert "MCP: memory_read, memory_patch" in first  # its MCP server is registered
    assert "message from human: Freeze the build section, please." in first
    # the next request carries the conversation so far, and nothing told twice
    assert second.count("Freeze the build section, please.") == 1

    # a message sent between two prompts arrives with the next prompt, once
    to_it = run_cli(repo, "send", "--to", one.identity, "--text", "Tests are red on main.")
    assert to_it.code == 0, to_it.stderr
    later = one.run([bash("true"), Text("Done.")], "--resume", one.id)
    assert f"You act here as {one.identity}." in later.sent(0)  # told again on resuming
    assert later.sent(0).count("Tests are red on main.") == 1
    assert later.sent(1).count("Tests are red on main.") == 1
    assert later.sent(1).count("Freeze the build section, please.") <= 1
    delivered = [e for e in events(repo) if e["type"] == "message.delivered"]
    assert [(e["actor"], e["data"]["via"]) for e in delivered] == 2 * [
        (one.identity, "hook:claude-code")
    ]


# The holder's next tool call: a command that succeeds (PostToolUse), one that fails
# (PostToolUseFailure), four at once (Claude Code runs them together: four hooks race to tell
# it), or one of memkeeper's MCP tools (its result's notices; the hooks do not see MCP calls,
# and the next Bash call's hook must not tell it again).
FOLLOW_UPS: dict[str, tuple[Reply, str]] = {
    "bash": (bash("echo next"), "hook:claude-code"),
    "bash-failed": (bash("false"), "hook:claude-code"),
    "bash-4-at-once": (
        Tools(tuple(bash(f"sleep 0.3; echo {n}") for n in range(4))),
        "hook:claude-code",
    ),
    "mcp": (Tool("mcp__memkeeper__memory_claims", {}), "mcp"),
}


@pytest.mark.parametrize("follow_up", list(FOLLOW_UPS))
def test_a_release_request_reaches_the_holder_after_its_next_tool_call_once(
    repo: Path, tmp_path: Path, follow_up: str
) -> None:
    holder = session(repo, tmp_path)
    then, via = FOLLOW_UPS[follow_up]
    asked: list[Body] = []

    def ask(body: Body) -> Reply:
        asked.append(body)
        granted = json.loads(last_tool_result(body))["id"]
        said = ("--text", "I need build.")
        request = run_cli(repo, "--agent", "reviewer", "request-release", granted, *said)
        assert request.code == 0, request.stderr
        time.sleep(1.1)  # the MCP server looks for notices at most once a second
        return then

    steps: list[Step] = [
        mcp("memory_sections", path="CLAUDE.md"),  # its MCP tools are offered from here on
        bash("memkeeper claim CLAUDE.md#build --strict --json"),
        ask,
        bash("echo again"),
        Text("Done."),
    ]
    model = holder.run(steps, "--session-id", holder.id)

    said = "reviewer asks you to release your claim about c1: I need build."
    after = model.turns.index(asked[0]) + 1  # the request that carries the follow-up's result
    counts = [model.sent(n).count(said) for n in range(len(model.turns))]
    assert counts == [0] * after + [1] * (len(counts) - after)
    delivered = [e for e in events(repo) if e["type"] == "message.delivered"]
    assert [(e["actor"], e["data"]["via"]) for e in delivered] == [(holder.identity, via)]


def test_two_sessions_at_once_are_two_identities_and_never_their_own_obstacle(
    repo: Path, tmp_path: Path
) -> None:
    sent = run_cli(repo, "send", "--to", "all", "--text", "Both of you: CLAUDE.md is busy.")
    assert sent.code == 0, sent.stderr
    sessions = [session(repo, tmp_path), session(repo, tmp_path)]
    together = threading.Barrier(2, timeout=60)
    claude_md = str(repo / "CLAUDE.md")

    def script(who: Session, line: str) -> list[Step]:
        def claim(body: Body) -> Reply:
            together.wait()  # both claim at once
            return bash("memkeeper claim CLAUDE.md --strict --json")

        edit = {"file_path": claude_md, "old_string": line, "new_string": f"{line} ({who.id})"}
        entry = f"Edited CLAUDE.md as {who.id}."
        return [
            claim,
            Tool("Read", {"file_path": claude_md}),
            Tool("Edit", edit),
            mcp("memory_append", path="memory/decisions.md", text=entry),
            Text("Done."),
        ]

    with contextlib.ExitStack() as stack:
        lines = (BUILD_LINE, TEST_LINE)
        models = [
            stack.enter_context(FakeModel(script(s, n)))
            for s, n in zip(sessions, lines, strict=True)
        ]
        started = [s.start(m, "--session-id", s.id) for s, m in zip(sessions, models, strict=True)]
        for process in started:
            finish(process)

    calls = [
        {c.name: c for c in m.calls() if "sleep" not in c.input.get("command", "")} for m in models
    ]
    winner = next(i for i, made in enumerate(calls) if not made["Bash"].error)
    holder, other = sessions[winner], sessions[1 - winner]
    won, lost = calls[winner], calls[1 - winner]
    assert json.loads(won["Bash"].result)["agent"] == holder.identity
    assert holder.identity in lost["Bash"].result  # the refusal names the holder
    assert not won["mcp__memkeeper__memory_append"].error
    assert not won["Edit"].error, won["Edit"]  # not blocked by its own claim
    assert lost["Edit"].error
    assert holder.identity in lost["Edit"].result  # the gate names the holder
    text = (repo / "CLAUDE.md").read_text()
    assert f"({holder.id})" in text
    assert f"({other.id})" not in text

    for model in models:  # each session is told once, as itself
        assert model.sent(0).count("Both of you: CLAUDE.md is busy.") == 1
    actors = {(e["type"], e["actor"]) for e in events(repo)}
    assert ("message.delivered", holder.identity) in actors  # through its hooks
    assert ("message.delivered", other.identity) in actors
    assert ("claim.granted", holder.identity) in actors  # through its Bash tool
    assert ("section.external_edit", holder.identity) in actors  # its hook
    for each, made in zip(sessions, calls, strict=True):  # through its MCP server
        assert ("entry.appended", each.identity) in actors, made
    appended = (repo / "memory/decisions.md").read_text()
    assert all(f"Edited CLAUDE.md as {s.id}." in appended for s in sessions)


# The gate answers an Edit of a human's section with an ask (approve only if you speak for
# the owners), which a headless `claude -p` takes as a refusal, even with bypassPermissions.
def test_an_agent_cannot_change_a_humans_section_by_its_bash_or_its_edit_tool(
    repo: Path, tmp_path: Path
) -> None:
    ref = "CLAUDE.md#release-process"  # owners: [human] in the sample policy
    rev = run_cli(repo, "read", ref, "--json").json["rev"]
    before = (repo / "CLAUDE.md").read_bytes()
    agent = session(repo, tmp_path)
    patch = f"echo 'Ship on Fridays.' | memkeeper patch {ref} --expect-rev {rev} --body-file -"
    claude_md = str(repo / "CLAUDE.md")
    edit = {"old_string": "Only humans cut releases.", "new_string": "Agents cut releases."}
    steps: list[Step] = [
        bash(patch),
        bash(patch.replace(" patch ", " --agent human patch ")),
        Tool("Read", {"file_path": claude_md}),
        Tool("Edit", {"file_path": claude_md, **edit}),
        Text("Done."),
    ]
    model = agent.run(steps, "--session-id", agent.id)

    as_itself, as_human, _, edited = model.calls()
    assert as_itself.result.startswith("Exit code 4"), as_itself  # memkeeper's own refusal
    assert f"you are '{agent.identity}'" in as_itself.result
    assert as_human.error
    assert "acting as human needs a key .memkeeper-signers trusts for human" in as_human.result
    assert edited.error  # the gate's refusal
    assert "release-process" in edited.result, edited
    assert "Approve it only if you are, or speak for, human." in edited.result
    assert (repo / "CLAUDE.md").read_bytes() == before
