"""``Memory.check`` with the claims guard: a commit's claim violations join ``check``'s own,
advisory claims are warnings of a passing check, and ``--push`` judges the claims alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import Failed
from memkeeper.ops.checking import check_here
from memkeeper.ops.commitguard import Pushed

if TYPE_CHECKING:
    from tests.ops.conftest import Agents

pytestmark = pytest.mark.peer("git")
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


@pytest.fixture
def repo(sample: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (sample / ".gitignore").write_text("memory/scratch/\n")
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "baseline")
    monkeypatch.chdir(sample)
    return sample


def test_a_claimed_path_and_a_broken_file_fail_one_check(repo: Path, agents: Agents) -> None:
    agents("codex:T1").claim("CLAUDE.md", strict=True)
    log = repo / "memory" / "decisions.md"
    log.write_text(log.read_text().replace("Use SQLite", "Use Postgres"))
    (repo / "CLAUDE.md").write_text((repo / "CLAUDE.md").read_text() + "\nMore.\n")
    git(repo, "add", "-A")
    with pytest.raises(Failed) as caught:
        check_here(agents("human").workspace, staged=True)
    rules = sorted((v.path, v.rule) for v in caught.value.violations)
    assert rules == [("CLAUDE.md", "claimed"), ("memory/decisions.md", "append-only")]


def test_a_claimed_path_alone_fails_the_check(repo: Path, agents: Agents) -> None:
    agents("codex:T1").claim("src/", strict=True)
    (repo / "src" / "new.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    with pytest.raises(Failed) as caught:
        check_here(agents("human").workspace, staged=True)
    assert (
        caught.value.message
        == "this commit touches paths under 1 strict claim(s) of another identity"
    )
    assert [v.rule for v in caught.value.violations] == ["claimed"]


def test_an_advisory_claim_is_a_warning_of_a_passing_check(repo: Path, agents: Agents) -> None:
    agents("codex:T1").claim("src/")
    (repo / "src" / "new.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    done = check_here(agents("human").workspace, staged=True)
    assert done["violations"] == []
    [warned] = done["claim_warnings"]
    assert "advisory, so it goes ahead" in warned
    assert [c["holder"] for c in done["claims"]] == ["codex:T1"]


def test_without_staged_the_claims_are_not_asked(repo: Path, agents: Agents) -> None:
    agents("codex:T1").claim("CLAUDE.md", strict=True)
    (repo / "CLAUDE.md").write_text((repo / "CLAUDE.md").read_text() + "\nMore.\n")
    assert "claims" not in check_here(agents("human").workspace)


def test_a_push_is_judged_by_its_claims_alone(repo: Path, agents: Agents) -> None:
    agents("codex:T1").claim("CLAUDE.md", strict=True)
    head = git(repo, "rev-parse", "HEAD")
    line = Pushed("refs/heads/main", head, "refs/heads/main", "0" * 40)
    with pytest.raises(Failed) as caught:
        check_here(agents("human").workspace, push=[line])
    assert (
        caught.value.message == "the push touches paths under 1 strict claim(s) of another identity"
    )
    assert check_here(agents("codex:T1").workspace, push=[line])["push"] is True
