"""The hook verbs through ``main()``: ``hook claude-code`` speaks Claude Code's protocol on
stdin and stdout and always exits 0; ``install-hooks`` installs the git pre-commit hook and
the gates of the agents named (positionally), ``uninstall-hooks`` takes them out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.hooks import _NAMES, HOOK_KINDS
from memkeeper.fs.agentfiles import AGENTS
from memkeeper.install.githook import MARKER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Cli


def hook_input(cwd: Path, tool: str, tool_input: dict[str, Any], event: str = "PreToolUse") -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": str(cwd),
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": tool_input,
        }
    )


def rewrite_history(root: Path, cwd: Path | None = None) -> str:
    path = root / "memory/decisions.md"
    return hook_input(cwd or root, "Write", {"file_path": str(path), "content": "# Gone\n"})


def decision(stdout: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(stdout)["hookSpecificOutput"]
    return out


# -- hook claude-code ----------------------------------------------------------------------------


def test_the_hook_answers_a_pre_tool_use_call_on_stdout_and_exits_0(cli: Cli, sample: Path) -> None:
    done = cli("hook", "claude-code", stdin=rewrite_history(sample))
    assert (done.code, done.stderr) == (0, "")
    out = decision(done.stdout)
    assert out["permissionDecision"] == "deny"
    assert "memkeeper append memory/decisions.md" in out["permissionDecisionReason"]
    assert "--agent claude-code:s1" in out["permissionDecisionReason"]


def test_the_hook_prints_nothing_for_a_silent_allow(cli: Cli, sample: Path) -> None:
    body = hook_input(sample, "Write", {"file_path": str(sample / "src/x.py"), "content": "x"})
    done = cli("hook", "claude-code", stdin=body)
    assert (done.code, done.stdout, done.stderr) == (0, "", "")


def test_the_hook_exits_0_and_explains_when_its_input_is_unreadable(cli: Cli) -> None:
    done = cli("hook", "claude-code", stdin="{not json")
    assert (done.code, done.stdout) == (0, "")
    assert done.stderr.startswith(
        "memkeeper hook claude-code: cannot read the hook input (not JSON"
    )
    assert done.stderr.endswith("; allowed\n")


def test_the_hook_speaks_only_its_protocol_even_with_json(cli: Cli, sample: Path) -> None:
    done = cli("hook", "claude-code", "--json", stdin=rewrite_history(sample))
    assert "status" not in json.loads(done.stdout)
    assert decision(done.stdout)["permissionDecision"] == "deny"


def test_root_and_agent_options_reach_the_gate(cli: Cli, sample: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    body = rewrite_history(sample, cwd=elsewhere)
    found = cli("hook", "claude-code", "--root", str(sample), "--agent", "bot", stdin=body)
    assert decision(found.stdout)["permissionDecision"] == "deny"
    assert "--agent bot`" in decision(found.stdout)["permissionDecisionReason"]
    # a session whose cwd is elsewhere is gated too: the root is found from the target file
    away = cli("hook", "claude-code", stdin=body, cwd=elsewhere)
    assert decision(away.stdout)["permissionDecision"] == "deny"
    assert f"--root {sample}" in decision(away.stdout)["permissionDecisionReason"]


def test_post_tool_use_through_main_indexes_the_change_as_the_sessions_agent(
    cli: Cli, sample: Path
) -> None:
    assert cli("init").code == 0
    claude = sample / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make wheel"))
    edit = {"file_path": str(claude), "old_string": "make build", "new_string": "make wheel"}
    done = cli("hook", "claude-code", stdin=hook_input(sample, "Edit", edit, "PostToolUse"))
    assert (done.code, done.stdout, done.stderr) == (0, "", "")
    last = json.loads(cli("events", "--json").stdout.splitlines()[-1])
    assert (last["type"], last["actor"], last["data"]["tool"]) == (
        "section.external_edit",
        "claude-code:s1",
        "Edit",
    )


def test_an_unknown_hook_kind_is_a_usage_error_naming_the_known_ones(cli: Cli) -> None:
    done = cli("hook", "windsurf", stdin="{}")
    assert done.code == 2
    assert "invalid choice: 'windsurf'" in done.stderr
    assert all(kind in done.stderr for kind in HOOK_KINDS)


# -- install-hooks -------------------------------------------------------------------------------


@pytest.mark.peer("git")
def test_install_hooks_writes_the_git_hook_once(cli: Cli, sample: Path) -> None:
    first = cli("install-hooks", "--json")
    assert first.code == 0, first.stderr
    hook = sample / ".git/hooks/pre-commit"
    assert first.json["git_hook_changed"] is True
    assert Path(first.json["git_hook"]).resolve() == hook.resolve()
    assert MARKER in hook.read_text()
    assert "claude_settings" not in first.json
    again = cli("install-hooks")
    assert again.stdout.startswith("git pre-commit hook already installed: ")


@pytest.mark.peer("git")
def test_install_hooks_with_claude_code_adds_the_gate_to_the_settings(
    cli: Cli, sample: Path
) -> None:
    done = cli("install-hooks", "--claude-code")
    assert done.code == 0, done.stderr
    assert "\nClaude Code gate added to " in done.stdout
    settings = json.loads((sample / ".claude/settings.json").read_text())
    assert set(settings["hooks"]) == {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",  # after a call that failed, in place of PostToolUse
        "SessionStart",  # the channel: what the agent is told when its session starts
        "UserPromptSubmit",  # and what has come for it since, before each prompt
    }
    assert "matcher" not in settings["hooks"]["SessionStart"][0]  # every start: no tool name
    assert "Claude Code gate already in " in cli("install-hooks", "--claude-code").stdout

    # settings an earlier memkeeper wrote, without PostToolUseFailure, get it on the next run
    del settings["hooks"]["PostToolUseFailure"]
    (sample / ".claude/settings.json").write_text(json.dumps(settings))
    assert "Claude Code gate added to " in cli("install-hooks", "--claude-code").stdout
    settings = json.loads((sample / ".claude/settings.json").read_text())
    assert "PostToolUseFailure" in settings["hooks"]


def test_the_help_names_every_agent_install_hooks_sets_up() -> None:
    assert ", ".join(AGENTS) + ", or all" == _NAMES  # spelled out for the hook's start-up


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["install-hooks", "--agent", "all"], "run: memkeeper install-hooks all"),
        (["--agent", "codex", "install-hooks"], "run: memkeeper install-hooks codex"),
        (["install-hooks", "vim"], "unknown agent 'vim' — name one or more of claude-code"),
        (["install-hooks", "--mcp"], "--mcp registers the server for the agents named"),
        (["uninstall-hooks", "emacs"], "unknown agent 'emacs'"),
        (
            ["install-hooks", "codex", "--served"],
            "run: memkeeper install-hooks claude-code --served",
        ),
        (["uninstall-hooks", "--served"], "run: memkeeper uninstall-hooks claude-code --served"),
    ],
)
def test_agents_are_named_positionally_and_a_misreading_is_refused(
    cli: Cli, sample: Path, argv: list[str], says: str
) -> None:
    done = cli(*argv)
    assert done.code == 2
    assert says in done.stderr
    assert not (sample / ".git/hooks/pre-commit").exists()


@pytest.mark.peer("git")
def test_install_hooks_names_agents_and_uninstall_hooks_takes_them_out(
    cli: Cli, sample: Path
) -> None:
    done = cli("install-hooks", "codex", "cline", "--json")
    assert done.code == 0, done.stderr
    assert list(done.json["agents"]) == ["codex", "cline"]
    assert "run /hooks once" in done.json["agents"]["codex"]["todo"][0]
    assert (sample / ".codex/hooks.json").exists()
    gone = cli("uninstall-hooks")
    assert gone.code == 0, gone.stderr
    assert gone.stdout.startswith("git pre-commit hook removed: ")
    assert "Codex: deleted .codex/hooks.json\n" in gone.stdout
    assert not (sample / ".codex").exists()
    assert not (sample / ".git/hooks/pre-commit").exists()


@pytest.mark.peer("git")
def test_served_is_installed_and_taken_out_alone_from_the_command_line(
    cli: Cli, sample: Path
) -> None:
    done = cli("install-hooks", "claude-code", "--served")
    assert done.code == 0, done.stderr
    assert "\nserved gate (http://127.0.0.1:" in done.stdout
    assert (sample / ".claude/settings.local.json").exists()
    gone = cli("uninstall-hooks", "claude-code", "--served")
    assert gone.code == 0, gone.stderr
    assert gone.stdout == "served gate removed: .claude/settings.local.json, .memkeeper/gate.json\n"
    assert (sample / ".claude/settings.json").exists()  # the command hooks stay
    again = cli("uninstall-hooks", "claude-code", "--served")
    assert again.stdout == "served gate: nothing of memkeeper's installed\n"
