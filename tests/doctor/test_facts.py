"""What ``doctor`` collects, from files laid out in a temp project and a temp home: the gates
install-hooks wrote, Claude Code's user settings, Codex's project and hook trust as its
``config.toml`` keys them, Gemini CLI's trusted folders and its switches, the MCP servers,
and the login shell — asked only when Codex's gate depends on it (a scripted answer here)."""

from __future__ import annotations

import json
from pathlib import Path

from memkeeper.doctor.facts import collect
from memkeeper.doctor.judge import CodexHook
from memkeeper.doctor.userhook import command, spec
from memkeeper.install.hooks import install


def fake_git(args: object, cwd: Path) -> tuple[int, bytes]:
    return 0, b".git/hooks\n"


def put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class Login:
    """A login shell that finds ``answer`` and counts how often it was asked."""

    def __init__(self, answer: str | None) -> None:
        self.answer, self.asked = answer, 0

    def __call__(self, shell: str, where: Path) -> str | None:
        self.asked += 1
        return self.answer


def layout(tmp_path: Path, *agents: str, mcp: bool = False) -> tuple[Path, dict[str, str]]:
    root, home = tmp_path / "repo", tmp_path / "home"
    (root / ".git" / "hooks").mkdir(parents=True)
    home.mkdir()
    install(root, agents, mcp=mcp, python="/usr/bin/python3", run=fake_git)
    return root, {"HOME": str(home), "PATH": str(tmp_path / "bin"), "SHELL": "/bin/bash"}


def test_the_installed_gates_and_mcp_servers_are_found(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "claude-code", "gemini", mcp=True)
    facts = collect(root, env=env, login=Login(None))
    assert facts.gates == (
        ("claude-code", ".claude/settings.json"),
        ("gemini", ".gemini/settings.json"),
    )
    assert facts.mcp == {"claude-code", "gemini"}
    assert (facts.found, facts.venv) == (None, False)


def test_the_project_venv_is_where_the_gate_finds_memkeeper(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "codex")
    venv = root / ".venv" / "bin" / "memkeeper"
    put(venv, "#!/bin/sh\n")
    venv.chmod(0o755)
    login = Login(None)
    facts = collect(root, env=env, login=login)
    assert (facts.found, facts.venv, login.asked) == (str(venv), True, 0)


def test_the_login_shell_is_asked_for_codex_when_memkeeper_is_on_path_only(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "codex", "claude-code")
    program = tmp_path / "bin" / "memkeeper"
    put(program, "#!/bin/sh\n")
    program.chmod(0o755)
    login = Login("/usr/local/bin/memkeeper")
    facts = collect(root, env=env, login=login)
    assert (facts.found, facts.login, login.asked) == (str(program), "/usr/local/bin/memkeeper", 1)
    login = Login(None)
    collect(root, ["claude-code"], env=env, login=login)
    assert login.asked == 0  # Claude Code runs hooks with the caller's PATH


def test_the_users_settings_are_read_as_jsonc(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "claude-code", "gemini")
    home = Path(env["HOME"])
    settings = home / ".claude" / "settings.json"
    entry = {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": command("claude-code", None)}],
    }
    text = json.dumps({"hooks": {"PreToolUse": [entry]}, "disableAllHooks": True})
    put(settings, "// mine\n" + text[:-1] + ",}\n")
    facts = collect(root, env=env, login=Login(None))
    assert (facts.user_gates, facts.claude_hooks_off) == (frozenset({"claude-code"}), True)
    assert facts.claude_settings == str(settings)
    assert facts.gemini_settings == str(home / ".gemini" / "settings.json")


def test_the_projects_gate_in_the_users_settings_is_not_the_user_gate(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "gemini")
    project = (root / ".gemini" / "settings.json").read_text()
    put(Path(env["HOME"]) / ".gemini" / "settings.json", project)
    assert collect(root, env=env, login=Login(None)).user_gates == frozenset()
    user = json.dumps({"hooks": {event: [entry] for event, entry in spec("gemini", None).events}})
    put(Path(env["HOME"]) / ".gemini" / "settings.json", user)
    assert collect(root, env=env, login=Login(None)).user_gates == {"gemini"}


def test_codex_trust_is_read_as_codex_keys_it(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "codex")
    source = root / ".codex" / "hooks.json"
    pre, post = f"{source}:pre_tool_use:0:0", f"{source}:post_tool_use:0:0"
    config = (
        f'[projects."{root}"]\ntrust_level = "trusted"\n\n'
        f'[hooks.state."{pre}"]\ntrusted_hash = "sha256:00"\n\n'
        f'[hooks.state."{post}"]\nenabled = false\n'
    )
    put(Path(env["HOME"]) / ".codex" / "config.toml", config)
    facts = collect(root, env=env, login=Login(None))
    assert facts.codex_trust == "trusted"
    start, prompt = f"{source}:session_start:0:0", f"{source}:user_prompt_submit:0:0"
    assert facts.codex_hooks == (
        CodexHook(pre, True, True),
        CodexHook(post, False, False),
        CodexHook(start, False, True),
        CodexHook(prompt, False, True),
    )


def test_codex_home_moves_with_its_variable(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "codex")
    put(tmp_path / "elsewhere" / "config.toml", f'[projects."{root}"]\ntrust_level = "untrusted"\n')
    facts = collect(root, env={**env, "CODEX_HOME": str(tmp_path / "elsewhere")}, login=Login(None))
    assert facts.codex_trust == "untrusted"
    assert facts.codex_config == str(tmp_path / "elsewhere" / "config.toml")


def test_gemini_trust_comes_from_its_file_and_its_switches(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "gemini")
    home = Path(env["HOME"])
    assert collect(root, env=env, login=Login(None)).gemini_trust is None
    put(home / ".gemini" / "trustedFolders.json", json.dumps({str(tmp_path): "TRUST_FOLDER"}))
    assert collect(root, env=env, login=Login(None)).gemini_trust is True
    moved = {**env, "GEMINI_CLI_TRUSTED_FOLDERS_PATH": str(tmp_path / "none.json")}
    assert collect(root, env=moved, login=Login(None)).gemini_trust is None
    trusting = {**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    assert (
        "GEMINI_CLI_TRUST_WORKSPACE"
        in collect(root, env=trusting, login=Login(None)).gemini_trust_off
    )
    put(home / ".gemini" / "settings.json", '{"security": {"folderTrust": {"enabled": false}}}')
    assert "folder trust is off" in collect(root, env=env, login=Login(None)).gemini_trust_off
    assert collect(root, env=env, login=Login(None)).gemini_hooks_off is False
    put(home / ".gemini" / "settings.json", '{"hooksConfig": {"enabled": false}}')
    assert collect(root, env=env, login=Login(None)).gemini_hooks_off is True


def test_unreadable_user_files_count_as_absent(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "claude-code", "codex")
    home = Path(env["HOME"])
    put(home / ".claude" / "settings.json", "{not json")
    put(home / ".codex" / "config.toml", "[projects\n")
    facts = collect(root, env=env, login=Login(None), review=Review(None))
    assert (facts.user_gates, facts.codex_trust) == (frozenset(), None)
    assert [hook.trusted for hook in facts.codex_hooks] == [False] * 4


class Review:
    """Codex's verdicts, as ``codex app-server`` would give them, and who asked."""

    def __init__(self, verdicts: dict[str, str] | None) -> None:
        self.verdicts, self.asked = verdicts, 0

    def __call__(self, codex: str, root: Path, env: object) -> dict[str, str] | None:
        self.asked += 1
        return self.verdicts


def test_codex_is_asked_for_its_verdict_where_it_is_installed(tmp_path: Path) -> None:
    root, env = layout(tmp_path, "codex", "gemini")
    pre = f"{root / '.codex' / 'hooks.json'}:pre_tool_use:0:0"
    review = Review({pre: "modified"})
    facts = collect(root, env=env, login=Login(None), review=review)
    assert (review.asked, [hook.status for hook in facts.codex_hooks]) == (0, [""] * 4)
    codex = tmp_path / "bin" / "codex"
    put(codex, "#!/bin/sh\n")
    codex.chmod(0o755)
    facts = collect(root, env=env, login=Login(None), review=review)
    assert [hook.status for hook in facts.codex_hooks] == ["modified", "", "", ""]
    collect(root, ["gemini"], env=env, login=Login(None), review=review)
    assert review.asked == 1  # not for another agent's gate
    silent = collect(root, env=env, login=Login(None), review=Review(None))
    assert [hook.status for hook in silent.codex_hooks] == ["unanswered"] * 4


def test_a_served_pre_tool_hook_that_blocks_on_failure_is_found(tmp_path: Path) -> None:
    """``--served`` writes ``"onFailure": "block"`` on the PreToolUse http hook; a hook
    installed before that, without it, is told apart (doctor says to install again)."""
    root, env = layout(tmp_path)
    install(root, ["claude-code"], served=True, python="/usr/bin/python3", run=fake_git)
    facts = collect(root, env=env, login=Login(None))
    assert facts.served.url is not None
    assert (facts.served.blocking, facts.served.serving) == (True, False)
    local = root / ".claude" / "settings.local.json"
    local.write_text(local.read_text().replace('"onFailure": "block"', '"onFailure": "continue"'))
    assert collect(root, env=env, login=Login(None)).served.blocking is False
