"""``doctor``'s judgement on hand-made facts: each trap that keeps a gate from running as its
agent runs it is a ``fail`` naming its fix — Claude Code started in a subdirectory (or with
every hook off), Codex's project and hook trust, Gemini CLI's folder trust, memkeeper missing
for the gate or for Codex's login shell, a gate not installed — and what does run is ``ok``;
the MCP server is a ``warn``, trust kept where memkeeper cannot look ``unknown``."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.doctor.judge import (
    CodexHook,
    Facts,
    Finding,
    Served,
    failed,
    gemini_trusted,
    judge,
)

ROOT = "/home/dev/repo"
PRE = f"{ROOT}/.codex/hooks.json:pre_tool_use:0:0"
POST = f"{ROOT}/.codex/hooks.json:post_tool_use:0:0"


def facts(**changes: Any) -> Facts:
    """Everything in order: every gate runs."""
    good = Facts(
        root=ROOT,
        named=(),
        gates=(),
        found="/usr/local/bin/memkeeper",
        venv=False,
        login="/usr/local/bin/memkeeper",
        shell="/bin/bash",
        mcp=frozenset({"claude-code", "codex", "gemini", "copilot", "cursor"}),
        user_gates=frozenset({"claude-code", "gemini"}),
        claude_hooks_off=False,
        gemini_hooks_off=False,
        claude_settings="/home/dev/.claude/settings.json",
        gemini_settings="/home/dev/.gemini/settings.json",
        codex_config="/home/dev/.codex/config.toml",
        codex_trust="trusted",
        codex_hooks=(CodexHook(PRE, True, True), CodexHook(POST, True, True)),
        gemini_trust=True,
        gemini_trust_file="/home/dev/.gemini/trustedFolders.json",
        gemini_trust_off="",
    )
    return dataclasses.replace(good, **changes)


def by_check(found: list[Finding], agent: str, check: str) -> Finding:
    return next(f for f in found if f.agent == agent and f.check == check)


CLAUDE = (("claude-code", ".claude/settings.json"),)
CODEX = (("codex", ".codex/hooks.json"),)
GEMINI = (("gemini", ".gemini/settings.json"),)


def test_with_every_gate_in_order_nothing_fails() -> None:
    gates = CLAUDE + CODEX + GEMINI + (("cursor", ".cursor/hooks.json"),)
    found = judge(facts(gates=gates))
    assert failed(found) == []
    assert {f.agent for f in found} == {"claude-code", "codex", "gemini", "cursor"}
    assert by_check(found, "cursor", "trust").status == "unknown"


def test_no_gate_installed_has_nothing_to_judge() -> None:
    assert judge(facts()) == []


def test_an_agent_named_without_a_gate_fails_with_the_install_command() -> None:
    (found,) = judge(facts(named=("gemini",)))
    assert (found.status, found.fix) == ("fail", "memkeeper install-hooks gemini")


def test_claude_code_without_the_user_gate_fails_in_a_subdirectory() -> None:
    found = by_check(
        judge(facts(gates=CLAUDE, user_gates=frozenset({"gemini"}))), "claude-code", "subdirectory"
    )
    assert found.status == "fail"
    assert "subdirectory" in found.message
    assert "no project hook runs" in found.message
    assert found.fix.startswith("memkeeper doctor --fix claude-code")


def test_claude_code_with_every_hook_disabled_fails_whatever_else_is_there() -> None:
    found = judge(facts(gates=CLAUDE, claude_hooks_off=True))
    (off,) = failed(found)
    assert off.check == "hooks-off"
    assert "disableAllHooks" in off.fix


def test_gemini_with_hooks_switched_off_fails_whatever_else_is_there() -> None:
    (off,) = failed(judge(facts(gates=GEMINI, gemini_hooks_off=True, gemini_trust=None)))
    assert off.check == "hooks-off"
    assert "hooksConfig" in off.fix


def test_codex_in_an_untrusted_project_fails_with_the_table_to_add() -> None:
    found = by_check(judge(facts(gates=CODEX, codex_trust=None)), "codex", "project-trust")
    assert found.status == "fail"
    assert f'[projects."{ROOT}"]\ntrust_level = "trusted"' in found.fix
    assert "codex exec" in found.fix
    marked = by_check(judge(facts(gates=CODEX, codex_trust="untrusted")), "codex", "project-trust")
    assert "marks this project untrusted" in marked.message


def test_codex_hooks_nobody_reviewed_fail_the_gate_and_warn_for_the_others() -> None:
    hooks = (CodexHook(PRE, False, True), CodexHook(POST, True, False))
    found = [f for f in judge(facts(gates=CODEX, codex_hooks=hooks)) if f.check == "hook-trust"]
    assert [f.status for f in found] == ["fail", "warn"]
    assert "skips hooks nobody trusted, silently" in found[0].message
    assert "disabled" in found[1].message
    assert "not the gate itself" in found[1].message
    assert all("/hooks" in f.fix and "--dangerously-bypass-hook-trust" in f.fix for f in found)


def test_codexs_own_verdict_outweighs_the_recorded_review() -> None:
    hooks = (CodexHook(PRE, True, True, "modified"), CodexHook(POST, False, True, "trusted"))
    found = [f for f in judge(facts(gates=CODEX, codex_hooks=hooks)) if f.check == "hook-trust"]
    assert [f.status for f in found] == ["fail", "ok"]  # the gate: a fail
    assert "changed since it was reviewed" in found[0].message
    assert "Codex says" in found[1].message


def test_a_recorded_review_unchecked_by_codex_says_how_to_check_it() -> None:
    found = by_check(judge(facts(gates=CODEX)), "codex", "hook-trust")
    assert found.status == "ok"
    assert "install Codex on PATH for doctor to ask it" in found.message
    silent = (CodexHook(PRE, True, True, "unanswered"),)
    found = by_check(judge(facts(gates=CODEX, codex_hooks=silent)), "codex", "hook-trust")
    assert found.status == "ok"
    assert "Codex did not answer" in found.message
    unreviewed = (CodexHook(PRE, False, True, "unanswered"),)
    found = by_check(judge(facts(gates=CODEX, codex_hooks=unreviewed)), "codex", "hook-trust")
    assert found.status == "fail"


def test_a_login_shell_without_memkeeper_warns_for_codex_only() -> None:
    found = judge(facts(gates=CLAUDE + CODEX, login=None))
    assert failed(found) == []
    (warned,) = [f for f in found if f.check == "login-shell"]
    assert (warned.agent, warned.status) == ("codex", "warn")
    assert "The gate still runs" in warned.message
    assert warned.fix.startswith("ln -s /usr/local/bin/memkeeper /usr/local/bin/memkeeper")


def test_the_project_venv_is_found_by_the_gate_whatever_the_login_shell_finds() -> None:
    found = judge(facts(gates=CODEX, login=None, venv=True, found=f"{ROOT}/.venv/bin/memkeeper"))
    assert [f.status for f in found if f.check in ("memkeeper", "login-shell")] == ["ok"]


def test_memkeeper_missing_fails_every_gate() -> None:
    found = failed(judge(facts(gates=CLAUDE + GEMINI, found=None, login=None)))
    assert [(f.agent, f.check) for f in found] == [
        ("claude-code", "memkeeper"),
        ("gemini", "memkeeper"),
    ]
    assert "memkeeper is not installed" in found[0].message


def test_gemini_in_an_untrusted_folder_fails_and_warns_of_skip_trust() -> None:
    for verdict, said in ((None, "does not trust this folder"), (False, "DO_NOT_TRUST")):
        found = by_check(judge(facts(gates=GEMINI, gemini_trust=verdict)), "gemini", "folder-trust")
        assert found.status == "fail"
        assert said in found.message
        assert "--skip-trust would run it there with project hooks off" in found.message
        assert f'"{ROOT}": "TRUST_FOLDER"' in found.fix
        assert "GEMINI_CLI_TRUST_WORKSPACE=true" in found.fix


def test_gemini_with_folder_trust_off_runs_the_gate() -> None:
    off = "folder trust is off in /home/dev/.gemini/settings.json"
    found = by_check(
        judge(facts(gates=GEMINI, gemini_trust=None, gemini_trust_off=off)),
        "gemini",
        "folder-trust",
    )
    assert found.status == "ok"
    assert found.message == off


def test_gemini_without_the_user_gate_fails_in_a_subdirectory() -> None:
    found = by_check(judge(facts(gates=GEMINI, user_gates=frozenset())), "gemini", "subdirectory")
    assert found.status == "fail"
    assert found.message.startswith("Gemini CLI started in a subdirectory")
    assert found.fix.startswith(
        "memkeeper doctor --fix gemini (adds to /home/dev/.gemini/settings.json"
    )


def test_a_missing_mcp_server_is_a_warning_with_its_install_command() -> None:
    found = by_check(judge(facts(gates=CODEX, mcp=frozenset())), "codex", "mcp")
    assert (found.status, found.fix) == ("warn", "memkeeper install-hooks codex --mcp")


# -- Gemini CLI's trust rules ---------------------------------------------------------------------


def test_the_longest_rule_holding_the_folder_decides() -> None:
    rules = {"/home/dev": "TRUST_FOLDER", "/home/dev/repo": "DO_NOT_TRUST"}
    assert gemini_trusted(rules, "/home/dev/repo/sub") is False
    assert gemini_trusted(rules, "/home/dev/other") is True
    assert gemini_trusted(rules, "/srv") is None


def test_trust_parent_trusts_the_rules_parent_folder() -> None:
    rules = {"/home/dev/repo/.gemini": "TRUST_PARENT"}
    assert gemini_trusted(rules, "/home/dev/repo") is True
    assert gemini_trusted(rules, "/home/dev/repository") is None


@given(st.lists(st.sampled_from(["a", "b", "ab"]), min_size=1, max_size=4))
def test_a_folder_is_never_held_by_a_sibling_sharing_its_prefix(parts: list[str]) -> None:
    folder = "/" + "/".join(parts)
    assert gemini_trusted({folder + "x": "TRUST_FOLDER"}, folder) is None
    assert gemini_trusted({folder: "TRUST_FOLDER"}, folder + "/deeper") is True


# -- the gate served by memkeeper watch --------------------------------------------------------

URL = "http://127.0.0.1:40001/hook/claude-code"
EVERY = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit")


def served(**changes: Any) -> list[Finding]:
    found = judge(facts(gates=CLAUDE, served=Served(**changes)))
    return [f for f in found if f.check == "served"]


def test_a_gate_not_served_says_nothing_of_it() -> None:
    assert served() == []


def test_a_served_gate_set_up_whole_and_served_is_ok() -> None:
    (found,) = served(url=URL, hooked=EVERY, serving=True, blocking=True)
    assert (found.status, found.message) == ("ok", f"memkeeper watch serves the gate at {URL}")


def test_a_served_gate_without_its_daemon_is_a_warning_naming_memkeeper_watch() -> None:
    (found,) = served(url=URL, hooked=EVERY, serving=False, blocking=True)
    assert (found.status, found.fix) == ("warn", "memkeeper watch")
    assert "the command hook answers" in found.message
    assert "2.1.332+ blocks the calls the gate covers" in found.message


def test_a_pre_tool_http_hook_without_on_failure_is_a_warning_to_install_again() -> None:
    """Installed before ``onFailure``: on Claude Code 2.1.332 a hung daemon (the lock held,
    no answer) lets each call through after the timeout; the next install adds the field."""
    (found,) = served(url=URL, hooked=EVERY, serving=True, blocking=False)
    assert (found.status, found.fix) == ("warn", "memkeeper install-hooks claude-code --served")
    assert '"onFailure": "block"' in found.message


def test_an_event_without_its_http_hook_while_served_fails_nothing_judges_it() -> None:
    (found,) = served(url=URL, hooked=EVERY[:2], stale=EVERY[2:], serving=True)
    assert found.status == "fail"
    assert "PostToolUseFailure, UserPromptSubmit" in found.message
    assert found.fix == "memkeeper install-hooks claude-code --served"
    (unserved,) = served(url=URL, hooked=EVERY[:2], serving=False)
    assert unserved.status == "warn"  # the command hook judges them then


def test_http_hooks_without_a_config_are_a_warning() -> None:
    (found,) = served(stale=EVERY)
    assert found.status == "warn"
    assert found.path == ".claude/settings.local.json"
