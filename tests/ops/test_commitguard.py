"""The claims guard of a commit and a push: the changed paths git reports against the live
claims of the store, as ``check`` violations (strict) and warnings (advisory)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.fs.git import run_git
from memkeeper.ops.commitguard import Pushed, _commits, judge, parse_pushed
from memkeeper.store.errors import StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.ops.conftest import Agents

ZERO = "0" * 40
SHA = "a" * 40
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


# -- pure parts ---------------------------------------------------------------------------


def test_pre_push_input_is_read_line_by_line_and_blank_lines_are_skipped() -> None:
    text = (
        f"refs/heads/main {SHA} refs/heads/main {ZERO}\n\nrefs/heads/x {ZERO} refs/heads/x {SHA}\n"
    )
    assert parse_pushed(text) == [
        Pushed("refs/heads/main", SHA, "refs/heads/main", ZERO),
        Pushed("refs/heads/x", ZERO, "refs/heads/x", SHA),
    ]


@pytest.mark.parametrize("line", ["refs/heads/main", f"main {SHA} main nope", f"a {SHA} b {SHA} c"])
def test_a_line_that_is_not_git_pre_push_input_is_refused_with_its_number(line: str) -> None:
    with pytest.raises(Invalid) as caught:
        parse_pushed(f"\n{line}\n")
    assert caught.value.message.startswith("stdin:2: ")
    assert "<local ref> <local sha> <remote ref> <remote sha>" in caught.value.message


shas = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
refs = st.from_regex(r"refs/(heads|tags)/[a-z][a-z0-9/_.-]{0,20}", fullmatch=True) | st.just("HEAD")


@given(st.lists(st.builds(Pushed, refs, shas, refs, shas), max_size=5))
def test_pre_push_lines_read_back_what_git_wrote(lines: list[Pushed]) -> None:
    text = "".join(f"{p.local_ref} {p.local_sha} {p.remote_ref} {p.remote_sha}\n" for p in lines)
    assert parse_pushed(text) == lines


def test_git_logs_names_are_read_per_commit() -> None:
    out = b"\x01" + b"1" * 40 + b"\x00\nCLAUDE.md\x00docs/a.md\x00\x01" + b"2" * 40 + b"\x00"
    assert _commits(out) == [("1" * 40, ["CLAUDE.md", "docs/a.md"]), ("2" * 40, [])]


# -- with git and a store -----------------------------------------------------------------

on_git = pytest.mark.peer("git")


@pytest.fixture
def repo(sample: Path) -> Path:
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "baseline")
    return sample


def change(root: Path, rel: str, text: str = "\nMore.\n") -> None:
    with open(root / rel, "a", encoding="utf-8") as handle:
        handle.write(text)


@on_git
def test_a_staged_change_under_anothers_strict_claim_is_a_violation(
    repo: Path, agents: Agents
) -> None:
    agents("codex:T1").claim("CLAUDE.md", strict=True, objective="rewrite the build notes")
    agents("codex:T1").claim("docs/", ttl=300)
    change(repo, "CLAUDE.md")
    change(repo, "docs/runbook.md")
    git(repo, "add", "-A")
    found = judge(agents("claude-code:S1").workspace, repo, run_git)
    [refused] = found.violations
    assert (refused.path, refused.rule) == ("CLAUDE.md", "claimed")
    assert "under codex:T1's strict write claim" in refused.message
    assert "memkeeper request-release" in refused.fix
    [warned] = found.warnings
    assert warned.startswith("this commit changes docs/runbook.md, under codex:T1's write")
    assert [h["strict"] for h in found.hits] == [True, False]


@on_git
def test_a_deleted_or_renamed_path_counts_by_both_names(repo: Path, agents: Agents) -> None:
    agents("codex:T1").claim("docs/runbook.md", strict=True)
    agents("codex:T1").claim("AGENTS.md", strict=True)
    git(repo, "mv", "docs/runbook.md", "docs/moved.md")
    git(repo, "rm", "-q", "AGENTS.md")
    found = judge(agents("human").workspace, repo, run_git)
    assert sorted(str(v.path) for v in found.violations) == ["AGENTS.md", "docs/runbook.md"]


@on_git
def test_the_committers_own_claim_passes(repo: Path, agents: Agents) -> None:
    agents("claude-code:S1").claim("CLAUDE.md", strict=True)
    change(repo, "CLAUDE.md")
    git(repo, "add", "-A")
    found = judge(agents("claude-code:S1").workspace, repo, run_git)
    assert (found.violations, found.warnings) == ([], [])


NOTES = "# Project\n\n## Build\n\nmake\n\n## Testing\n\npytest\n"


@on_git
def test_a_section_claim_refuses_only_a_commit_touching_its_section(
    repo: Path, agents: Agents
) -> None:
    (repo / "NOTES.md").write_text(NOTES)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "notes")
    agents("codex:T1").claim("NOTES.md#project/testing", strict=True)
    (repo / "NOTES.md").write_text(NOTES.replace("make", "make all"))
    git(repo, "add", "-A")
    assert judge(agents("human").workspace, repo, run_git).violations == []
    (repo / "NOTES.md").write_text(NOTES.replace("pytest", "pytest -x"))
    git(repo, "add", "-A")
    assert [v.path for v in judge(agents("human").workspace, repo, run_git).violations] == [
        "NOTES.md"
    ]


@on_git
def test_a_push_is_judged_by_the_commits_the_remote_lacks(
    repo: Path, agents: Agents, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "HEAD:refs/heads/main")
    base = git(repo, "rev-parse", "HEAD")
    agents("codex:T1").claim("CLAUDE.md", strict=True)
    agents("codex:T1").claim("README.md", strict=True)
    change(repo, "CLAUDE.md")
    git(repo, "commit", "-qam", "one")
    change(repo, "src/app.py", "\n# more\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    head = git(repo, "rev-parse", "HEAD")
    ws = agents("claude-code:S1").workspace
    line = Pushed("refs/heads/main", head, "refs/heads/main", base)
    found = judge(ws, repo, run_git, pushed=[line], remote="origin")
    assert [v.path for v in found.violations] == ["CLAUDE.md"]  # README.md is already there
    new = Pushed("refs/heads/topic", head, "refs/heads/topic", ZERO)
    found = judge(ws, repo, run_git, pushed=[new], remote="origin")
    assert [v.path for v in found.violations] == ["CLAUDE.md"]  # main holds the baseline
    gone = Pushed("(delete)", ZERO, "refs/heads/old", head)
    assert judge(ws, repo, run_git, pushed=[gone], remote="origin").violations == []


@on_git
def test_a_store_that_does_not_answer_lets_the_commit_through_with_a_warning(
    repo: Path, agents: Agents, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents("codex:T1").claim("CLAUDE.md", strict=True)
    change(repo, "CLAUDE.md")
    git(repo, "add", "-A")
    ws = agents("claude-code:S1").workspace

    def down(now: Callable[[], float]) -> bool:
        raise StoreUnavailable("no member of the cluster answered")

    monkeypatch.setattr(ws.store, "any_live_claim", down)
    found = judge(ws, repo, run_git)
    assert found.violations == []
    [warned] = found.warnings
    assert warned.startswith("claims not checked: the shared store does not answer")


@on_git
def test_without_a_store_nothing_is_claimed_and_none_is_made(repo: Path, agents: Agents) -> None:
    change(repo, "CLAUDE.md")
    git(repo, "add", "-A")
    found = judge(agents("human").workspace, repo, run_git)
    assert (found.violations, found.warnings) == ([], [])
    assert not (repo / ".memkeeper").exists()
