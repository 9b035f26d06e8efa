"""``memkeeper check --push`` and the claims' warnings on the command line, and what
``install-hooks``/``uninstall-hooks`` say of the pre-push hook."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memkeeper.cli.checkpush import push_lines
from tests.conftest import run_main

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--push", "--staged"], "give it no PATH and no --staged"),
        (["--push", "CLAUDE.md"], "give it no PATH and no --staged"),
        (["--remote", "origin"], "--remote goes with --push"),
        (["--staged", "--full"], "--staged and --push judge what git holds"),
        (["--push", "--full"], "leave --full out"),
    ],
)
def test_push_takes_no_paths_and_remote_needs_push(
    sample: Path, args: list[str], said: str
) -> None:
    done = run_main(sample, "check", *args)
    assert done.code == 2
    assert said in done.stderr


def test_bad_pre_push_input_is_exit_2(sample: Path) -> None:
    done = run_main(sample, "check", "--push", stdin="main nope\n")
    assert done.code == 2
    assert "stdin:1: 'main nope' is not a pre-push line" in done.stderr


@pytest.mark.peer("git")
def test_a_push_is_refused_naming_the_holder_and_warns_of_an_advisory_claim(
    sample: Path,
) -> None:
    (sample / ".gitignore").write_text("memory/scratch/\n")
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "baseline")
    head = git(sample, "rev-parse", "HEAD")
    line = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"
    codex = {"CODEX_THREAD_ID": "T1"}
    assert run_main(sample, "claim", "src/", env=codex).code == 0
    done = run_main(sample, "check", "--push", stdin=line)
    assert done.code == 0, done.stderr
    assert done.stdout == "ok: the push touches nothing under another identity's strict claim\n"
    assert "memkeeper: warning: the push carries changes to src/" in done.stderr
    assert run_main(sample, "claim", "CLAUDE.md", "--strict", env=codex).code == 0
    done = run_main(sample, "check", "--push", "--remote", "origin", stdin=line)
    assert done.code == 6
    assert (
        "CLAUDE.md: [claimed] the push carries changes to CLAUDE.md, under codex:T1's"
        in done.stderr
    )


def test_the_pre_push_hook_is_reported_installed_and_removed() -> None:
    installed = {
        "push_hook": "/r/.git/hooks/pre-push",
        "push_legacy_hook": "/r/.git/hooks/pre-push.legacy",
        "push_moved_existing_hook": True,
        "push_hook_changed": True,
    }
    assert push_lines(installed) == [
        "git pre-push hook installed: /r/.git/hooks/pre-push (runs memkeeper check --push)",
        "  moved the existing hook to /r/.git/hooks/pre-push.legacy",
    ]
    removed = {"push_hook": "/p", "push_hook_removed": True, "push_legacy_hook_restored": True}
    assert push_lines(removed) == [
        "git pre-push hook removed: /p",
        "  put back the hook it had moved to pre-push.legacy",
    ]
    assert push_lines({"git_hook": None}) == []


@pytest.mark.peer("git")
def test_under_the_pre_commit_framework_the_range_comes_from_its_variables(
    sample: Path,
) -> None:
    (sample / ".gitignore").write_text("memory/scratch/\n")
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "baseline")
    base = git(sample, "rev-parse", "HEAD")
    (sample / "src" / "new.py").write_text("x = 1\n")
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "more")
    assert run_main(sample, "claim", "src/", "--strict", env={"CODEX_THREAD_ID": "T1"}).code == 0
    framework = {
        "PRE_COMMIT_FROM_REF": base,
        "PRE_COMMIT_TO_REF": git(sample, "rev-parse", "HEAD"),
        "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main",
        "PRE_COMMIT_REMOTE_NAME": "origin",
    }
    done = run_main(sample, "check", "--push", env=framework)
    assert done.code == 6
    assert "src/new.py: [claimed] the push carries changes to src/new.py" in done.stderr
    framework["PRE_COMMIT_FROM_REF"] = git(sample, "rev-parse", "HEAD")
    assert run_main(sample, "check", "--push", env=framework).code == 0
