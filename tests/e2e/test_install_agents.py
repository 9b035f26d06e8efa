"""``install-hooks all --mcp`` and ``uninstall-hooks all`` through the real command, on a
repository that already configures every agent the way its users do: hooks and MCP servers
of their own, comments (JSONC, TOML), a Cline hook and a git pre-commit hook of their own.

The user's bytes survive both (install adds, uninstall takes exactly that out again); a
second install changes nothing; the installed commands name no path of this machine; and
each command, run by a shell as its agent runs it, really runs the gate. The user's entries
follow each agent's documented configuration (
VS Code's ``servers``: code.visualstudio.com/docs/copilot/reference/mcp-configuration).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memkeeper.gate import jsonc
from tests.conftest import MEMKEEPER, run_cli

CLAUDE_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Bash(npm test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "\\"$CLAUDE_PROJECT_DIR\\"/.claude/check.sh"}]
      }
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "npm run lint --silent"}]}]
  }
}
"""
CLAUDE_MCP = """{
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
        }
    }
}
"""
CODEX_HOOKS = """{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "^Bash$",
        "hooks": [
          {"type": "command", "command": "python3 .codex/hooks/guard.py", "timeout": 10}
        ]
      }
    ]
  }
}
"""
CODEX_CONFIG = """# Codex settings for this project (checked in)
model = "gpt-5.5-codex"
approval_policy = "on-request"   # ask before leaving the sandbox

[sandbox_workspace_write]
network_access = false

# the docs server the team uses
[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs-server"]
"""
GEMINI_SETTINGS = """{
  // Gemini CLI: this project's settings
  "general": {"vimMode": true},
  "hooks": {
    "AfterTool": [
      {
        "matcher": "write_file",
        /* format what the agent wrote */
        "hooks": [
          {"name": "format", "type": "command", "command": "npx prettier -w .", "timeout": 10000}
        ]
      }
    ]
  },
  "mcpServers": {
    "figma": {"httpUrl": "https://mcp.figma.com/mcp"} // the design system
  }
}
"""
COPILOT_HOOKS = """{
  "version": 1,
  "hooks": {
    "sessionStart": [{"type": "command", "bash": "./scripts/log-session.sh", "timeoutSec": 5}]
  }
}
"""
VSCODE_MCP = """{
  // MCP servers for this workspace
  "servers": {
    "playwright": {
      "command": "npx",
      "args": ["@playwright/mcp@latest"],
    },
  },
  "inputs": [],
}
"""
CURSOR_HOOKS = """{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{"command": "./hooks/format.sh"}],
    "beforeShellExecution": [{"command": "./hooks/audit.sh", "matcher": "curl|wget"}]
  }
}
"""
CURSOR_MCP = '{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}\n'
CLINE_HOOK = """#!/bin/sh
# no rm -rf from the agent
input=$(cat)
case $input in
  *"rm -rf"*) echo '{"cancel": true, "errorMessage": "no rm -rf here"}' ;;
  *) echo '{"cancel": false, "contextModification": "lint before you commit"}' ;;
esac
"""
GIT_HOOK = "#!/bin/sh\necho 'their pre-commit ran'\n"
USER_FILES = {
    ".claude/settings.json": CLAUDE_SETTINGS,
    ".mcp.json": CLAUDE_MCP,
    ".codex/hooks.json": CODEX_HOOKS,
    ".codex/config.toml": CODEX_CONFIG,
    ".gemini/settings.json": GEMINI_SETTINGS,
    ".github/hooks/audit.json": COPILOT_HOOKS,
    ".vscode/mcp.json": VSCODE_MCP,
    ".cursor/hooks.json": CURSOR_HOOKS,
    ".cursor/mcp.json": CURSOR_MCP,
    ".clinerules/coding.md": "Run the linter before you commit.\n",
    ".clinerules/hooks/PreToolUse": CLINE_HOOK,
    ".git/hooks/pre-commit": GIT_HOOK,
}
EXECUTABLE = {".clinerules/hooks/PreToolUse", ".git/hooks/pre-commit"}


@pytest.fixture
def configured(sample: Path) -> Path:
    """The sample under memkeeper, with every agent configured by its users."""
    assert run_cli(sample, "init").code == 0
    for rel, text in USER_FILES.items():
        path = sample / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel in EXECUTABLE:
            path.chmod(0o755)
    return sample


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside git's object store (and memkeeper's state): bytes and mode."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        skip = rel.startswith(".memkeeper/") or (
            rel.startswith(".git/") and not rel.startswith(".git/hooks/")
        )
        if path.is_file() and not skip:
            found[rel] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return found


def installed(root: Path) -> dict[str, Any]:
    done = run_cli(root, "install-hooks", "all", "--mcp", "--json")
    assert done.code == 0, done.stderr
    return done.json


def load(root: Path, rel: str) -> Any:
    text = (root / rel).read_text()
    return tomllib.loads(text) if rel.endswith(".toml") else json.loads(jsonc.blank(text))


def test_install_then_uninstall_gives_every_users_file_back_byte_for_byte(
    configured: Path,
) -> None:
    before = snapshot(configured)
    done = installed(configured)
    after = snapshot(configured)
    assert done["moved_existing_hook"] is True
    assert after[".git/hooks/pre-commit.legacy"] == before[".git/hooks/pre-commit"]
    assert after[".clinerules/hooks/PreToolUse.legacy"] == before[".clinerules/hooks/PreToolUse"]
    assert done["agents"]["cline"]["hooks"][0]["kept"] == ".clinerules/hooks/PreToolUse.legacy"
    for rel in (".github/hooks/audit.json", ".clinerules/coding.md"):
        assert after[rel] == before[rel]
    undone = run_cli(configured, "uninstall-hooks", "all", "--json")
    assert undone.code == 0, undone.stderr
    assert snapshot(configured) == before
    assert undone.json["legacy_hook_restored"] is True


def test_the_users_entries_stay_and_ours_are_added_once(configured: Path) -> None:
    users = {rel: load(configured, rel) for rel in USER_FILES if rel.endswith((".json", ".toml"))}
    installed(configured)
    claude = load(configured, ".claude/settings.json")
    assert claude["permissions"] == users[".claude/settings.json"]["permissions"]
    assert claude["hooks"]["Stop"] == users[".claude/settings.json"]["hooks"]["Stop"]
    assert (
        claude["hooks"]["PreToolUse"][0] == users[".claude/settings.json"]["hooks"]["PreToolUse"][0]
    )
    assert len(claude["hooks"]["PreToolUse"]) == len(claude["hooks"]["PostToolUse"]) + 1 == 2
    codex = load(configured, ".codex/config.toml")
    assert codex["mcp_servers"]["docs"] == users[".codex/config.toml"]["mcp_servers"]["docs"]
    assert codex["mcp_servers"]["memkeeper"]["command"] == "sh"
    assert (configured / ".codex/config.toml").read_text().startswith(CODEX_CONFIG)
    gemini = (configured / ".gemini/settings.json").read_text()
    assert "// Gemini CLI: this project's settings" in gemini
    assert "/* format what the agent wrote */" in gemini
    assert set(load(configured, ".gemini/settings.json")["mcpServers"]) == {"figma", "memkeeper"}
    assert set(load(configured, ".vscode/mcp.json")["servers"]) == {"playwright", "memkeeper"}
    cursor = load(configured, ".cursor/hooks.json")
    assert cursor["hooks"]["afterFileEdit"][0] == {"command": "./hooks/format.sh"}
    assert set(cursor["hooks"]) == {
        "afterFileEdit",
        "beforeShellExecution",
        "preToolUse",
        "postToolUse",
    }
    copilot = load(configured, ".github/hooks/memkeeper.json")
    assert copilot["version"] == 1
    assert [e["bash"].split()[-1] for e in copilot["hooks"]["preToolUse"]] != []


def test_a_second_install_changes_nothing(configured: Path) -> None:
    installed(configured)
    first = snapshot(configured)
    again = installed(configured)
    assert snapshot(configured) == first
    assert again["git_hook_changed"] is False
    for agent in again["agents"].values():
        assert not any(f["changed"] for f in agent["hooks"]), agent
        assert agent["mcp"] is None or agent["mcp"]["changed"] is False


def absolute_paths(text: str) -> set[str]:
    """Absolute paths a command names (not ones under a variable, like ``"$m"/…``)."""
    return set(re.findall(r"(?:^|[\s'\"=>|;(])(/[^\s'\";)\\]*)", text))


def test_the_installed_files_name_no_path_of_this_machine(configured: Path) -> None:
    before = snapshot(configured)
    installed(configured)
    written = {rel for rel, found in snapshot(configured).items() if before.get(rel) != found}
    assert len(written) == 19  # .gitattributes too: the clean filter for live pages
    here = {str(configured), sys.executable, str(Path(sys.executable).parent), os.getcwd()}
    git_hooks = {".git/hooks/pre-commit", ".git/hooks/pre-commit.legacy", ".git/hooks/pre-push"}
    for rel in written - git_hooks:
        text = (configured / rel).read_text()  # (the git hooks name this machine's python)
        assert not any(path in text for path in here), rel
        for command in commands(text):
            assert absolute_paths(command) <= {"/dev/null"}, (rel, command)


def commands(text: str) -> list[str]:
    """The memkeeper commands in a file (the JSON strings or script lines that run it)."""
    return [m for m in re.findall(r'"((?:[^"\\]|\\.)*memkeeper(?:[^"\\]|\\.)*)"', text)] or [text]


# -- the installed commands run the gate ----------------------------------------------------------

APPEND = "echo x >> memory/decisions.md"


def payloads(root: Path) -> dict[str, dict[str, Any]]:
    """One deny payload per agent: a shell append onto the append-only log, in that agent's
    shape (agent-hooks/<agent>.md section 2, "Shell append")."""
    cwd = str(root)
    return {
        "claude-code": {
            "session_id": "abc123",
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": APPEND},
            "tool_use_id": "toolu_01ABC125",
        },
        "codex": {
            "session_id": "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
            "turn_id": "019a2b3c-5555-7000-8000-000000000001",
            "transcript_path": None,
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "model": "gpt-5.5-codex",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_use_id": "call_9f2a1e",
            "tool_input": {"command": APPEND},
        },
        "gemini": {
            "session_id": "51124319-e155-440c-b950-09aeb2ea488f",
            "transcript_path": "",
            "cwd": cwd,
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-10-05T10:00:03.789Z",
            "tool_name": "run_shell_command",
            "tool_input": {"command": APPEND, "description": "Append to the decisions log"},
        },
        "copilot": {
            "sessionId": "2c5b65f5-bb1d-4479-826e-c9cdacac321b",
            "timestamp": 1791176776100,
            "cwd": cwd,
            "toolName": "bash",
            "toolArgs": {"command": APPEND, "description": "Append", "mode": "sync"},
        },
        "cline": {
            "clineVersion": "4.2.0",
            "hookName": "PreToolUse",
            "timestamp": "1791176776100",
            "taskId": "01K9Z2X7R4C1B8D3E5F6G7H8J9",
            "workspaceRoots": [cwd],
            "userId": "c0ffee00-1111-2222-3333-444455556666",
            "model": {"provider": "unknown", "slug": "unknown"},
            "preToolUse": {
                "toolName": "run_commands",
                "parameters": {"commands": json.dumps([APPEND])},
            },
        },
        "cursor": {
            "conversation_id": "fc749b53-5672-41fa-87c7-c579c337199d",
            "generation_id": "0b1e2c3d-0000-4000-8000-000000000003",
            "model": "default",
            "hook_event_name": "preToolUse",
            "cursor_version": "2026.10.01-e373342",
            "workspace_roots": [cwd],
            "user_email": "dev@example.com",
            "transcript_path": None,
            "cwd": cwd,
            "tool_name": "Shell",
            "tool_use_id": "73da88f4-bc52-4b85-bdbe-34de8fa9c3ea",
            "tool_input": {"command": APPEND, "cwd": cwd, "timeout": 30000},
        },
    }


def pre_command(root: Path, agent: str) -> list[str]:
    """The argv an agent starts its pre-tool gate with (a shell, or Cline's executable)."""
    if agent == "cline":
        return [str(root / ".clinerules/hooks/PreToolUse")]
    rel, event, key = {
        "claude-code": (".claude/settings.json", "PreToolUse", "command"),
        "codex": (".codex/hooks.json", "PreToolUse", "command"),
        "gemini": (".gemini/settings.json", "BeforeTool", "command"),
        "copilot": (".github/hooks/memkeeper.json", "preToolUse", "bash"),
        "cursor": (".cursor/hooks.json", "preToolUse", "command"),
    }[agent]
    entries = load(root, rel)["hooks"][event]
    handlers = [h for e in entries for h in e.get("hooks", [e])]
    (ours,) = [h[key] for h in handlers if f"hook {agent}" in h[key]]
    return ["/bin/sh", "-c", ours]


def refused(agent: str, out: str) -> bool:
    """Whether ``out`` is that agent's deny (agent-hooks/<agent>.md section 3)."""
    answer = json.loads(out)
    if agent in ("claude-code", "codex"):
        return bool(answer["hookSpecificOutput"]["permissionDecision"] == "deny")
    if agent == "gemini":
        return bool(answer["decision"] == "deny")
    if agent == "copilot":
        return bool(answer["permissionDecision"] == "deny")
    if agent == "cline":
        return answer["cancel"] is True
    return bool(answer["permission"] == "deny")


def gate_env(path: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMKEEPER_", "CLAUDE_"))}
    return {**keep, "PATH": path}


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "copilot", "cline", "cursor"])
def test_each_installed_command_runs_the_gate(configured: Path, agent: str) -> None:
    (configured / ".clinerules/hooks/PreToolUse").write_text("#!/bin/sh\ncat >/dev/null\n")
    installed(configured)
    done = subprocess.run(
        pre_command(configured, agent),
        cwd=configured,
        input=json.dumps(payloads(configured)[agent]),
        capture_output=True,
        text=True,
        env=gate_env(f"{Path(MEMKEEPER).parent}:/usr/bin:/bin"),
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert refused(agent, done.stdout), done.stdout
    assert "memory/decisions.md" in done.stdout


@pytest.mark.parametrize("agent", ["claude-code", "codex", "cline"])
def test_the_projects_venv_is_found_off_path(configured: Path, agent: str) -> None:
    installed(configured)
    (configured / ".venv/bin").mkdir(parents=True)
    (configured / ".venv/bin/memkeeper").symlink_to(MEMKEEPER)
    env = gate_env("/usr/bin:/bin")
    if agent == "claude-code":
        env["CLAUDE_PROJECT_DIR"] = str(configured)
    done = subprocess.run(
        pre_command(configured, agent),
        cwd=configured,
        input=json.dumps(payloads(configured)[agent]),
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert refused(agent, done.stdout), done.stdout


def test_clines_own_hook_runs_first_and_its_cancel_stands(configured: Path) -> None:
    installed(configured)
    hook = [str(configured / ".clinerules/hooks/PreToolUse")]
    env = gate_env(f"{Path(MEMKEEPER).parent}:/usr/bin:/bin")
    payload = payloads(configured)["cline"]

    def answer(command: str) -> dict[str, Any]:
        payload["preToolUse"]["parameters"]["commands"] = json.dumps([command])
        done = subprocess.run(
            hook, input=json.dumps(payload), capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    assert answer("rm -rf build") == {"cancel": True, "errorMessage": "no rm -rf here"}
    memkeepers = answer(APPEND)
    assert memkeepers["cancel"] is True
    assert "memory/decisions.md" in memkeepers["errorMessage"]
    assert answer("ls") == {"cancel": False, "contextModification": "lint before you commit"}


def test_check_warns_when_an_installed_gate_cannot_run(configured: Path) -> None:
    installed(configured)
    env = {"PATH": "/usr/bin:/bin"}  # no memkeeper on PATH, no .venv in the project
    done = subprocess.run(
        [MEMKEEPER, "check", "--json"],
        cwd=configured,
        capture_output=True,
        text=True,
        env=gate_env(env["PATH"]),
        check=False,
    )
    warnings = json.loads(done.stdout)["warnings"]
    assert ".codex/hooks.json: the Codex gate cannot run on this machine" in "\n".join(warnings)
    assert len([w for w in warnings if "gate cannot run" in w]) == 6
    human = subprocess.run(
        [MEMKEEPER, "check"],
        cwd=configured,
        capture_output=True,
        text=True,
        env=gate_env("/usr/bin:/bin"),
        check=False,
    )
    assert "warning: .claude/settings.json: the Claude Code gate cannot run" in human.stdout
    found = run_cli(
        configured, "check", "--json", env={"PATH": f"{Path(MEMKEEPER).parent}:/usr/bin:/bin"}
    )
    assert not [w for w in found.json["warnings"] if "gate cannot run" in w]


def test_install_hooks_agent_all_is_refused_with_the_spelling_meant(configured: Path) -> None:
    before = snapshot(configured)
    done = run_cli(configured, "install-hooks", "--agent", "all")
    assert done.code == 2
    assert "run: memkeeper install-hooks all" in done.stderr
    assert snapshot(configured) == before


def test_uninstalling_one_agent_leaves_the_others_and_the_git_hook(configured: Path) -> None:
    installed(configured)
    done = run_cli(configured, "uninstall-hooks", "codex", "--json")
    assert done.code == 0, done.stderr
    assert (configured / ".codex/hooks.json").read_text() == CODEX_HOOKS
    assert (configured / ".codex/config.toml").read_text() == CODEX_CONFIG
    assert "hook claude-code" in (configured / ".claude/settings.json").read_text()
    assert done.json["git_hook"] is None
    assert (configured / ".git/hooks/pre-commit.legacy").exists()
