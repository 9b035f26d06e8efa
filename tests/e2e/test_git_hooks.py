"""``install-hooks`` end to end: real ``git commit``s through the installed hook, the Claude
Code settings merge, and the real pre-commit framework running this repository's hook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from memkeeper.install.githook import MARKER
from tests.conftest import MEMKEEPER, SAMPLE_REPO, run_cli

PROJECT = Path(__file__).resolve().parents[2]
PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
IDENTITY = {
    "GIT_AUTHOR_NAME": "Tess",
    "GIT_AUTHOR_EMAIL": "tess@example.com",
    "GIT_COMMITTER_NAME": "Tess",
    "GIT_COMMITTER_EMAIL": "tess@example.com",
}
REGION_START = "<!-- memkeeper:generated source=claims -->\n"


def run(
    root: Path, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("MEMKEEPER_", "GIT_"))}
    full.update({**IDENTITY, **(env or {})})
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, env=full, check=False)


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(root, "git", *args)


def commit(root: Path, message: str = "change") -> subprocess.CompletedProcess[str]:
    return git(root, "commit", "-q", "-m", message)


@pytest.fixture
def repo(sample: Path) -> Path:
    """The sample under memkeeper, regions rendered, hook installed, one commit made."""
    (sample / ".gitignore").write_text("memory/scratch/\n")
    for args in (["init"], ["regen"], ["install-hooks"]):
        assert run_cli(sample, *args).code == 0
    git(sample, "add", "-A")
    done = commit(sample, "baseline")
    assert done.returncode == 0, done.stderr
    return sample


def rewrite_history(root: Path) -> None:
    log = root / "memory" / "decisions.md"
    log.write_text(log.read_text().replace("Use SQLite", "Use Postgres"))


def test_a_commit_that_keeps_the_rules_passes(repo: Path) -> None:
    assert run_cli(repo, "append", "memory/decisions.md", "--text", "Use etcd.").code == 0
    (repo / "CLAUDE.md").write_text((repo / "CLAUDE.md").read_text() + "\nMore.\n")
    git(repo, "add", "-A")
    done = commit(repo)
    assert done.returncode == 0, done.stderr
    assert "ok: 2 staged file(s) checked" in done.stderr  # git shows a hook's stdout there


def test_rewriting_append_only_history_is_blocked(repo: Path) -> None:
    rewrite_history(repo)
    git(repo, "add", "memory/decisions.md")
    done = commit(repo)
    assert done.returncode != 0
    assert "memory/decisions.md:7: [append-only] history was rewritten" in done.stderr
    assert git(repo, "rev-list", "--count", "HEAD").stdout.strip() == "1"


def test_a_staged_private_file_is_blocked(repo: Path) -> None:
    git(repo, "add", "-f", "memory/scratch/agent-a.md")
    done = commit(repo)
    assert done.returncode != 0
    assert "memory/scratch/agent-a.md: [private]" in done.stderr


def test_a_hand_edited_generated_region_is_blocked(repo: Path) -> None:
    status = repo / "memory" / "status.md"
    status.write_text(status.read_text().replace(REGION_START, REGION_START + "by hand\n"))
    git(repo, "add", "memory/status.md")
    done = commit(repo)
    assert done.returncode != 0
    assert "[region-edited]" in done.stderr


def test_the_staged_version_is_judged_not_the_working_tree(repo: Path) -> None:
    log = repo / "memory" / "decisions.md"
    good = log.read_bytes()
    rewrite_history(repo)
    git(repo, "add", "memory/decisions.md")
    log.write_bytes(good)  # fixed in the working tree only
    assert commit(repo).returncode != 0
    git(repo, "add", "memory/decisions.md")
    assert run_cli(repo, "append", "memory/decisions.md", "--text", "Use etcd.").code == 0
    git(repo, "add", "memory/decisions.md")
    rewrite_history(repo)  # broken in the working tree only
    done = commit(repo)
    assert done.returncode == 0, done.stderr
    assert "Use etcd." in git(repo, "show", "HEAD:memory/decisions.md").stdout


def test_an_existing_hook_is_kept_called_first_and_never_nested(sample: Path) -> None:
    hooks = sample / ".git" / "hooks"
    theirs = '#!/bin/sh\necho "theirs ran" >> "$(git rev-parse --show-toplevel)/ran.txt"\n'
    (hooks / "pre-commit").write_text(theirs)
    (hooks / "pre-commit").chmod(0o755)
    (sample / ".gitignore").write_text("memory/scratch/\nran.txt\n")
    for _ in range(3):
        assert run_cli(sample, "install-hooks").code == 0
    assert (hooks / "pre-commit.legacy").read_text() == theirs
    assert MARKER in (hooks / "pre-commit").read_text()
    names = {p.name for p in hooks.glob("pre-commit*")} - {"pre-commit.sample"}
    assert names == {"pre-commit", "pre-commit.legacy"}
    git(sample, "add", "-A")
    assert commit(sample).returncode == 0
    assert (sample / "ran.txt").read_text() == "theirs ran\n"


def test_a_failing_legacy_hook_still_blocks_the_commit(sample: Path) -> None:
    legacy = sample / ".git" / "hooks" / "pre-commit"
    legacy.write_text("#!/bin/sh\necho 'legacy says no' >&2\nexit 3\n")
    legacy.chmod(0o755)
    assert run_cli(sample, "install-hooks").code == 0
    git(sample, "add", "CLAUDE.md")
    done = commit(sample)
    assert done.returncode != 0
    assert "legacy says no" in done.stderr


def test_the_hook_goes_to_the_shared_hooks_directory_from_a_linked_worktree(repo: Path) -> None:
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    linked = repo.parent / "linked"
    assert git(repo, "worktree", "add", "-q", str(linked)).returncode == 0
    done = run_cli(linked, "install-hooks", "--json")
    assert done.json["git_hook"] == str(repo / ".git" / "hooks" / "pre-commit")
    assert MARKER in (repo / ".git" / "hooks" / "pre-commit").read_text()


def test_install_hooks_outside_a_git_repository_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "install-hooks", "--root", str(tmp_path))
    assert done.code == 2
    assert "not a git repository" in done.stderr


# -- Claude Code settings -----------------------------------------------------------------------


def test_claude_code_settings_are_merged_once_keeping_what_was_there(sample: Path) -> None:
    settings = sample / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]
        }
    }
    settings.write_text(json.dumps({"model": "opus", **mine}, indent=4) + "\n")
    first = run_cli(sample, "install-hooks", "--claude-code", "--json")
    assert first.code == 0, first.stderr
    merged = settings.read_text()
    loaded = json.loads(merged)
    assert loaded["model"] == "opus"
    assert loaded["hooks"]["PreToolUse"][0] == mine["hooks"]["PreToolUse"][0]
    for event in ("PreToolUse", "PostToolUse"):
        commands = [h["command"] for g in loaded["hooks"][event] for h in g["hooks"]]
        assert [c for c in commands if "hook claude-code" in c] == [first.json["claude_command"]]
    assert '\n    "model"' in merged
    again = run_cli(sample, "install-hooks", "--claude-code", "--json")
    assert again.json["settings_changed"] is False
    assert settings.read_text() == merged


def test_settings_that_are_not_json_are_left_untouched(sample: Path) -> None:
    settings = sample / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": \n')
    done = run_cli(sample, "install-hooks", "--claude-code")
    assert done.code == 2
    assert ".claude/settings.json:2:1: not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": \n'


def test_the_installed_claude_command_runs_the_gate(sample: Path) -> None:
    assert run_cli(sample, "init").code == 0
    command = run_cli(sample, "install-hooks", "--claude-code", "--json").json["claude_command"]
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s1",
        "cwd": str(sample),
        "tool_name": "Bash",
        "tool_input": {"command": "echo x >> memory/decisions.md"},
    }
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    full = {**os.environ, **env}
    done = subprocess.run(
        command,
        shell=True,
        cwd=sample,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=full,
        check=False,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- the pre-commit framework --------------------------------------------------------------------


def test_this_repository_declares_the_memkeeper_check_hook() -> None:
    hooks = YAML(typ="safe").load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    hook, push = hooks
    assert hook["id"] == "memkeeper-check"
    assert hook["entry"] == "memkeeper check --staged"
    assert (hook["language"], hook["pass_filenames"], hook["require_serial"]) == (
        "python",
        True,
        True,
    )
    assert hook["always_run"] is True  # a commit that only deletes a log passes no file
    assert (push["id"], push["entry"], push["stages"]) == (
        "memkeeper-push-guard",
        "memkeeper check --push",
        ["pre-push"],
    )
    assert (push["pass_filenames"], push["always_run"]) == (False, True)


@dataclass(frozen=True)
class HookRepo:
    """This project as a hook repository, and the pre-commit cache its hooks are installed in."""

    source: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """One copy and one cache for the module's pre-commit runs: pre-commit keys the
    environment it builds (a virtualenv and a pip install of memkeeper, most of a test's
    minute) by the repository's path and commit, so the second test finds it built."""
    work = tmp_path_factory.mktemp("pre-commit")
    return HookRepo(project_copy(work), {"PRE_COMMIT_HOME": str(work / "pre-commit-home")})


def project_copy(tmp_path: Path) -> Path:
    """This project as committed code in a repository of its own: try-repo installs it with
    pip from a commit, whatever the working tree of the real repository holds."""
    copy = tmp_path / "memkeeper-src"
    copy.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("memkeeper", "policies"):
        shutil.copytree(PROJECT / name, copy / name, ignore=skip)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(PROJECT / name, copy / name)
    git(copy, "init", "-q")
    git(copy, "add", "-A")
    assert commit(copy, "memkeeper").returncode == 0
    return copy


def test_the_pre_commit_framework_runs_memkeeper_check_on_staged_files(
    tmp_path: Path, hook_repo: HookRepo
) -> None:
    source, env = hook_repo.source, hook_repo.env
    user = tmp_path / "user"
    shutil.copytree(SAMPLE_REPO, user)
    (user / ".gitignore").write_text("memory/scratch/\n")
    git(user, "init", "-q")
    git(user, "add", "-A")
    argv = (PRE_COMMIT, "try-repo", str(source), "memkeeper-check", "--all-files")
    passed = run(user, *argv, env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "memkeeper check" in passed.stdout
    assert "Passed" in passed.stdout
    git(user, "add", "-f", "memory/scratch/agent-a.md")
    failed = run(user, *argv, env=env)
    assert failed.returncode == 1
    assert "Failed" in failed.stdout
    assert "memory/scratch/agent-a.md: [private] a private file is staged" in failed.stdout
    git(user, "rm", "-q", "--cached", "memory/scratch/agent-a.md")
    assert commit(user, "memory files").returncode == 0
    git(user, "rm", "-q", "memory/decisions.md")  # a commit that only deletes the log
    staged_only = (PRE_COMMIT, "try-repo", str(source), "memkeeper-check")
    deleted = run(user, *staged_only, env=env)
    assert deleted.returncode == 1, deleted.stdout
    assert "memory/decisions.md: [append-only-deleted]" in deleted.stdout


def test_the_pre_commit_framework_runs_the_push_guard_on_the_pushed_range(
    tmp_path: Path, hook_repo: HookRepo
) -> None:
    source, env = hook_repo.source, hook_repo.env
    user = tmp_path / "user"
    shutil.copytree(SAMPLE_REPO, user)
    (user / ".gitignore").write_text("memory/scratch/\n")
    git(user, "init", "-q")
    git(user, "add", "-A")
    assert commit(user, "baseline").returncode == 0
    base = git(user, "rev-parse", "HEAD").stdout.strip()
    (user / "CLAUDE.md").write_text((user / "CLAUDE.md").read_text() + "\nMore.\n")
    git(user, "add", "-A")
    assert commit(user, "more").returncode == 0
    head = git(user, "rev-parse", "HEAD").stdout.strip()
    claimed = run(user, MEMKEEPER, "claim", "CLAUDE.md", "--strict", env={"CODEX_THREAD_ID": "t"})
    assert claimed.returncode == 0, claimed.stderr
    argv = (PRE_COMMIT, "try-repo", str(source), "memkeeper-push-guard", "--hook-stage", "pre-push")
    refused = run(user, *argv, "--from-ref", base, "--to-ref", head, env=env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "CLAUDE.md: [claimed] the push carries changes to CLAUDE.md, under codex:t's" in (
        refused.stdout
    )
    passed = run(user, *argv, "--from-ref", head, "--to-ref", head, env=env)
    assert passed.returncode == 0, passed.stdout
