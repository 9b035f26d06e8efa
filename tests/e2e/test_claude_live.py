"""Issue 23's acceptance with the real Claude Code CLI (`@anthropic-ai/claude-code` from npm),
driven offline by a scripted model on 127.0.0.1 (``fakemodel``): what a session is told when
it starts and while it works reaches the model once; two sessions at once are two identities
in the events, their strict claims exclude each other and neither is blocked by its own; an
agent's own ``memkeeper`` call cannot change a human's section.

Each session runs ``claude -p`` (``claudecli``) in an initialised copy of sample-repo with
``memkeeper install-hooks claude-code --mcp``; without the CLI these tests are skipped.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.e2e.claudecli import CLAUDE, Conversation, Session, bash, finish, mcp, session
from tests.e2e.fakemodel import Body, FakeModel, Reply, Step, Text, Tool, Tools, last_tool_result
from tests.e2e.hooktables import events, initialised

pytestmark = pytest.mark.skipif(
    CLAUDE is None,
    reason="the Claude Code CLI is not installed: npm install --prefix .cache/agents "
    "@anthropic-ai/claude-code (or set MEMKEEPER_TEST_CLAUDE to its path)",
)

BUILD_LINE = "- `make build` produces the wheel in `dist/`."
TEST_LINE = "- Run `make test` before every commit."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """sample-repo, initialised, with Claude Code's hooks and MCP server installed."""
    root = initialised(tmp_path / "repo")
    installed = run_cli(root, "install-hooks", "claude-code", "--mcp")
    assert installed.code == 0, installed.stderr
    return root


def test_a_session_is_told_who_it_is_and_what_waits_for_it_once(repo: Path, tmp_path: Path) -> None:
    sent = run_cli(repo, "send", "--to", "all", "--text", "Freeze the build section, please.")
    assert sent.code == 0, sent.stderr
    one = session(repo, tmp_path)
    steps: list[Step] = [bash("true"), Text("Done."), Text("Done again.")]
    with (
        FakeModel(steps) as model,
        Conversation(one.start(model, "--session-id", one.id, prompt=None)) as talk,
    ):
        talk.say("Run true.")
        # a message sent between two prompts arrives with the next one
        to_it = run_cli(repo, "send", "--to", one.identity, "--text", "Tests are red on main.")
        assert to_it.code == 0, to_it.stderr
        talk.say("And now?")

    first, second, third = (model.sent(n) for n in range(3))
    assert f"You act here as {one.identity}." in first
    assert "memkeeper read FILE#KEY" in first  # how section-owned files are changed
    assert "MCP: memory_read, memory_patch" in first  # its MCP server is registered
    assert "message from human: Freeze the build section, please." in first
    # each request carries the conversation so far, and nothing is told twice
    assert [second.count("Freeze the build section"), third.count("Freeze the build section")] == [
        1,
        1,
    ]
    assert [second.count("Tests are red on main."), third.count("Tests are red on main.")] == [0, 1]
    assert "UserPromptSubmit hook additional context: memkeeper — for you:" in third
    delivered = [e for e in events(repo) if e["type"] == "message.delivered"]
    assert [(e["actor"], e["data"]["via"]) for e in delivered] == 2 * [
        (one.identity, "hook:claude-code")
    ]

    # a session resumed later is told again who it is, and only what has come since
    again = one.run([Text("Back.")], "--resume", one.id)
    assert f"You act here as {one.identity}." in again.sent(0)
    assert again.sent(0).count("Tests are red on main.") == 1  # in the conversation, once


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
    # Its hook records its Edit — unless the other session's gate, judging its own Edit of
    # CLAUDE.md at that moment, read the file first: then the change is indexed by whoever
    # noticed it (``external``), never as the other session.
    edits = {e["actor"] for e in events(repo) if e["type"] == "section.external_edit"}
    assert edits, "the holder's Edit was never indexed"
    assert edits <= {holder.identity, "external"}, edits
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


def test_a_section_read_with_the_read_tool_and_changed_by_another_is_told_once(
    repo: Path, tmp_path: Path
) -> None:
    reader = session(repo, tmp_path)
    changed: list[Body] = []

    def change(body: Body) -> Reply:
        changed.append(body)
        ref = "CLAUDE.md#build"
        rev = str(run_cli(repo, "read", ref, "--json").json["rev"])
        patch = ("patch", ref, "--expect-rev", rev, "--body-file", "-")
        done = run_cli(repo, "--agent", "codex:xyz", *patch, stdin="- make all\n")
        assert done.code == 0, done.stderr
        return bash("echo next")

    steps: list[Step] = [
        Tool("Read", {"file_path": str(repo / "CLAUDE.md")}),
        change,
        bash("echo again"),
        Text("Done."),
    ]
    model = reader.run(steps, "--session-id", reader.id)

    said = "CLAUDE.md#inventory-service/build changed since you read it (rev 1 → 2) by codex:xyz"
    after = model.turns.index(changed[0]) + 1  # the request carrying `echo next`'s result
    counts = [model.sent(n).count(said) for n in range(len(model.turns))]
    assert counts == [0] * after + [1] * (len(counts) - after)
