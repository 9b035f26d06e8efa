"""``install-hooks claude-code --served``: this machine's http hooks in
``.claude/settings.local.json`` and the port and token in ``.memkeeper/gate.json``; nothing
shared changes, a second install changes nothing, uninstall takes exactly that out."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs import gateconfig
from memkeeper.fs.gateconfig import GateConfig
from memkeeper.install.hooks import CLAUDE_COMMAND, CLAUDE_START_COMMAND, install, uninstall
from memkeeper.install.jsonhooks import top_object
from memkeeper.install.served import LOCAL, TIMEOUT_S, add, http_hooks, uninstall_served

SERVED = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit")


def fake_git(args: Any, cwd: Path) -> tuple[int, bytes]:
    return 0, b".git/hooks\n"  # (check-ignore: 0, ignored)


def not_ignored(args: Any, cwd: Path) -> tuple[int, bytes]:
    return (1, b"") if args[0] == "check-ignore" else (0, b".git/hooks\n")


def served_install(root: Path, run: Any = fake_git) -> dict[str, Any]:
    return install(root, ["claude-code"], served=True, python=sys.executable, run=run)


def handlers(root: Path, rel: str = LOCAL) -> dict[str, list[dict[str, Any]]]:
    settings = top_object((root / rel).read_text(), rel).value
    return {
        event: [h for group in groups for h in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }


def test_served_adds_one_http_hook_per_served_event_and_a_private_config(tmp_path: Path) -> None:
    done = served_install(tmp_path)
    config = gateconfig.load(str(tmp_path / ".memkeeper"))
    assert config is not None
    found = handlers(tmp_path)
    assert tuple(found) == SERVED  # no SessionStart: Claude Code's http hooks skip it
    for event in SERVED:
        assert found[event] == [
            {
                "type": "http",
                "url": f"http://127.0.0.1:{config.port}/hook/claude-code",
                "headers": {
                    "Authorization": f"Bearer {config.token}",
                    "X-Memkeeper-Agent": "$MEMKEEPER_AGENT",
                    "X-Memkeeper-Root": "$MEMKEEPER_ROOT",
                },
                "allowedEnvVars": ["MEMKEEPER_AGENT", "MEMKEEPER_ROOT"],
                "timeout": TIMEOUT_S,
                # Claude Code 2.1.332+: the call is blocked when the daemon cannot answer
                **({"onFailure": "block"} if event == "PreToolUse" else {}),
            }
        ]
    for holding_the_token in (".memkeeper/gate.json", LOCAL):
        assert stat.S_IMODE((tmp_path / holding_the_token).stat().st_mode) == 0o600
    assert done["served"]["url"] == config.url("claude-code")
    assert done["served"]["hooks"] == {"path": LOCAL, "changed": True, "created": True}
    assert any("restart memkeeper watch" in t for t in done["agents"]["claude-code"]["todo"])


def test_the_shared_settings_are_the_same_with_or_without_served(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    install(tmp_path / "a", ["claude-code"], run=fake_git)
    served_install(tmp_path / "b")
    shared = ".claude/settings.json"
    assert (tmp_path / "a" / shared).read_bytes() == (tmp_path / "b" / shared).read_bytes()
    commands = {e: [h["command"] for h in hs] for e, hs in handlers(tmp_path / "a", shared).items()}
    for event in SERVED:
        assert commands[event] == [CLAUDE_COMMAND]  # steps aside while the gate is served
    assert commands["SessionStart"] == [CLAUDE_START_COMMAND]  # never: no http hook for it


def test_a_second_install_changes_nothing(tmp_path: Path) -> None:
    served_install(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    again = served_install(tmp_path)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert again["served"]["hooks"]["changed"] is False
    assert again["served"]["config_changed"] is False


def test_the_users_own_local_settings_stay_and_a_stale_hook_is_replaced(tmp_path: Path) -> None:
    old = GateConfig(1234, "old-token")
    mine = '{\n  // mine\n  "permissions": {"allow": ["Bash(ls)"]}\n}\n'
    (tmp_path / ".claude").mkdir()
    (tmp_path / LOCAL).write_text(add(mine, http_hooks(old)))
    served_install(tmp_path)  # a new config: the old hooks name another port and token
    text = (tmp_path / LOCAL).read_text()
    assert "// mine" in text
    assert '"allow": ["Bash(ls)"]' in text
    assert "old-token" not in text
    assert all(len(hs) == 1 for hs in handlers(tmp_path).values())


def test_uninstall_takes_out_the_hooks_and_the_config_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / LOCAL).write_text('{"permissions": {"allow": ["Bash(ls)"]}}\n')
    served_install(tmp_path)
    done = uninstall(tmp_path, ["claude-code"], run=fake_git)
    assert json.loads((tmp_path / LOCAL).read_text()) == {"permissions": {"allow": ["Bash(ls)"]}}
    assert not (tmp_path / ".memkeeper" / "gate.json").exists()
    assert done["served"]["config_removed"] is True


def test_uninstall_deletes_a_local_settings_file_memkeeper_created(tmp_path: Path) -> None:
    served_install(tmp_path)
    uninstall(tmp_path, ["claude-code"], run=fake_git)
    assert not (tmp_path / LOCAL).exists()


def test_served_is_for_claude_code_only(tmp_path: Path) -> None:
    with pytest.raises(Invalid, match="install-hooks claude-code --served"):
        install(tmp_path, ["codex"], served=True, run=fake_git)
    assert list(tmp_path.iterdir()) == []


def test_local_settings_git_would_commit_get_a_to_do(tmp_path: Path) -> None:
    done = served_install(tmp_path, run=not_ignored)
    assert any(".gitignore" in t for t in done["served"]["todo"])


def test_uninstall_served_takes_out_the_served_gate_alone(tmp_path: Path) -> None:
    served_install(tmp_path)
    shared = (tmp_path / ".claude" / "settings.json").read_bytes()
    done = uninstall_served(tmp_path)
    assert (tmp_path / ".claude" / "settings.json").read_bytes() == shared  # still the gate
    assert not (tmp_path / LOCAL).exists()
    assert not (tmp_path / ".memkeeper" / "gate.json").exists()
    assert done["served"]["config_removed"] is True
    assert uninstall_served(tmp_path)["served"]["config_removed"] is False  # nothing left


def test_each_http_hook_is_called_for_the_tools_its_command_hook_is(tmp_path: Path) -> None:
    """The command hook steps aside while the daemon serves: a tool only it was called for
    (a Read after which the session's read is written down) would be judged by neither."""
    served_install(tmp_path)

    def matchers(rel: str) -> dict[str, set[str | None]]:
        settings = top_object((tmp_path / rel).read_text(), rel).value
        return {
            event: {group.get("matcher") for group in groups}
            for event, groups in settings["hooks"].items()
        }

    shared, local = matchers(".claude/settings.json"), matchers(LOCAL)
    for event in SERVED:
        assert local[event] == shared[event], event
    assert "Read" in str(local["PostToolUse"])


def test_an_existing_local_settings_file_others_can_read_is_made_its_owners(
    tmp_path: Path,
) -> None:
    """It is going to hold the token: with it, another local user could call the served gate
    as any agent of this machine."""
    local = tmp_path / LOCAL
    local.parent.mkdir(parents=True)
    local.write_text('{"permissions": {"allow": []}}\n')
    local.chmod(0o644)
    done = served_install(tmp_path)
    assert stat.S_IMODE(local.stat().st_mode) == 0o600
    assert done["served"]["hooks"]["private"] is True
    assert json.loads(local.read_text())["permissions"] == {"allow": []}


def test_an_http_hook_from_before_on_failure_gets_it_on_the_next_install(tmp_path: Path) -> None:
    """A served gate installed before ``onFailure`` existed lets every call through on Claude
    Code 2.1.332 when the daemon is down (the guard's command hook also answers, but no
    longer needed for that): the next install puts the field in, on PreToolUse only."""
    served_install(tmp_path)
    local = tmp_path / LOCAL
    settings = json.loads(local.read_text())
    for groups in settings["hooks"].values():
        for group in groups:
            for one in group["hooks"]:
                one.pop("onFailure", None)
    local.write_text(json.dumps(settings, indent=2) + "\n")
    done = served_install(tmp_path)
    assert done["served"]["hooks"]["changed"] is True
    found = handlers(tmp_path)
    assert [h.get("onFailure") for h in found["PreToolUse"]] == ["block"]
    for event in SERVED:  # a failed PostToolUse notice or prompt check must not stop work
        if event != "PreToolUse":
            assert all("onFailure" not in h for h in found[event]), event
