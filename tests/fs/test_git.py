"""The git questions ``check`` asks: is this a repository, what HEAD and the index hold, which
paths are staged — against a real ``git init`` repository, and through a scripted runner."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.fs.git import Git, run_git

pytestmark = pytest.mark.peer("git")


@pytest.fixture(autouse=True)
def quiet_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Git that ignores this machine's configuration and never looks above ``tmp_path``."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{name}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{name}_EMAIL", "test@example.com")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def put(root: Path, relpath: str, data: bytes) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def commit(root: Path, **files: bytes) -> None:
    for relpath, data in files.items():
        put(root, relpath, data)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "commit")


class Scripted:
    """A runner that answers from a script and remembers each call."""

    def __init__(self, *answers: tuple[int, bytes]) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, args: Sequence[str], cwd: Path) -> tuple[int, bytes]:
        self.calls.append(tuple(args))
        return self.answers.pop(0)


# -- a real repository -----------------------------------------------------------------------


def test_a_git_init_directory_is_a_repository(repo: Path) -> None:
    assert Git(repo).is_repo() is True


def test_a_plain_directory_is_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert Git(plain).is_repo() is False


def test_before_the_first_commit_everything_in_the_index_is_staged(repo: Path) -> None:
    put(repo, "CLAUDE.md", b"# A\n")
    put(repo, "memory/b.md", b"# B\n")
    put(repo, "untracked.md", b"# C\n")
    git(repo, "add", "CLAUDE.md", "memory/b.md")
    assert Git(repo).staged() == ["CLAUDE.md", "memory/b.md"]
    assert Git(repo).head("CLAUDE.md") is None


def test_head_and_staged_blob_give_the_committed_and_the_staged_bytes(repo: Path) -> None:
    commit(repo, **{"CLAUDE.md": b"# Committed\n"})
    put(repo, "CLAUDE.md", b"# Staged\n")
    git(repo, "add", "CLAUDE.md")
    put(repo, "CLAUDE.md", b"# Working tree\n")
    ours = Git(repo)
    assert ours.head("CLAUDE.md") == b"# Committed\n"
    assert ours.staged_blob("CLAUDE.md") == b"# Staged\n"
    assert ours.show("HEAD:CLAUDE.md") == b"# Committed\n"


def test_a_path_git_does_not_hold_shows_nothing(repo: Path) -> None:
    commit(repo, **{"CLAUDE.md": b"# A\n"})
    assert Git(repo).head("missing.md") is None
    assert Git(repo).staged_blob("missing.md") is None


def test_staged_lists_added_and_modified_paths_but_not_deleted_or_unstaged(repo: Path) -> None:
    commit(repo, **{"keep.md": b"1\n", "gone.md": b"1\n", "edited.md": b"1\n", "old.md": b"1\n"})
    put(repo, "edited.md", b"2\n")
    put(repo, "added.md", b"new\n")
    put(repo, "keep.md", b"changed but not staged\n")
    git(repo, "add", "edited.md", "added.md")
    git(repo, "rm", "-q", "gone.md")
    git(repo, "mv", "old.md", "renamed.md")
    assert Git(repo).staged() == ["added.md", "edited.md", "renamed.md"]


def test_deleted_lists_what_the_index_or_the_working_tree_lost_against_head(repo: Path) -> None:
    commit(repo, **{"keep.md": b"1\n", "gone.md": b"1\n", "old.md": b"1\n", "wt.md": b"1\n"})
    git(repo, "rm", "-q", "gone.md")
    git(repo, "mv", "old.md", "renamed.md")
    (repo / "wt.md").unlink()
    git(repo, "rm", "-q", "--cached", "keep.md")  # untracked now, still on disk
    assert Git(repo).deleted(staged=True) == ["gone.md", "keep.md", "old.md"]
    assert Git(repo).deleted(staged=False) == ["gone.md", "keep.md", "old.md", "wt.md"]


def test_deleted_names_paths_from_a_root_below_the_top_of_the_repository(repo: Path) -> None:
    commit(repo, **{"top.md": b"1\n", "sub/root/log.md": b"1\n", "sub/root/kept.md": b"1\n"})
    git(repo, "rm", "-q", "top.md", "sub/root/log.md")
    assert Git(repo / "sub" / "root").deleted(staged=True) == ["log.md"]


def test_before_the_first_commit_nothing_is_deleted(repo: Path) -> None:
    put(repo, "a.md", b"1\n")
    git(repo, "add", "a.md")
    (repo / "a.md").unlink()
    assert Git(repo).deleted(staged=True) == []
    assert Git(repo).deleted(staged=False) == []


def test_deleted_asks_git_for_deletions_against_head(tmp_path: Path) -> None:
    runner = Scripted((0, b"a.md\0"), (0, b""))
    ours = Git(tmp_path, run=runner)
    assert ours.deleted(staged=True) == ["a.md"]
    assert ours.deleted(staged=False) == []
    diff = ("diff", "--name-only", "-z", "--no-renames", "--diff-filter=D", "--relative", "HEAD")
    assert runner.calls == [(diff[0], "--cached", *diff[1:], "--"), (*diff, "--")]


def test_staged_keeps_unusual_names_exactly(repo: Path) -> None:
    commit(repo, **{"a.md": b"1\n"})
    put(repo, "notes é/with space.md", b"x\n")
    git(repo, "add", "-A")
    assert Git(repo).staged() == ["notes é/with space.md"]


def test_nothing_staged_is_an_empty_list(repo: Path) -> None:
    commit(repo, **{"a.md": b"1\n"})
    assert Git(repo).staged() == []


def test_the_index_git_names_in_its_environment_is_the_one_judged(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(repo, **{"a.md": b"1\n"})
    other_index = tmp_path / "hook-index"
    put(repo, "b.md", b"staged elsewhere\n")
    subprocess.run(
        ["git", "add", "b.md"],
        cwd=repo,
        check=True,
        env={**os.environ, "GIT_INDEX_FILE": str(other_index)},
    )
    assert Git(repo).staged() == []
    monkeypatch.setenv("GIT_INDEX_FILE", str(other_index))
    assert Git(repo).staged() == ["b.md"]
    assert Git(repo).staged_blob("b.md") == b"staged elsewhere\n"


# -- the runner --------------------------------------------------------------------------------


def test_run_git_returns_the_exit_code_and_stdout(repo: Path) -> None:
    assert run_git(["rev-parse", "--is-inside-work-tree"], repo) == (0, b"true\n")
    code, _ = run_git(["show", "HEAD:nothing"], repo)
    assert code != 0


def test_a_missing_git_is_an_environment_failure(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(EnvironmentFailure, match=r"cannot run git: .* — install git"):
        run_git(["status"], repo)


def test_the_runner_is_asked_exactly_what_check_needs(tmp_path: Path) -> None:
    runner = Scripted((0, b"true\n"), (0, b"data"), (0, b"a.md\0b/c.md\0"))
    ours = Git(tmp_path, run=runner)
    assert ours.is_repo() is True
    assert ours.staged_blob("x.md") == b"data"
    assert ours.staged() == ["a.md", "b/c.md"]
    assert runner.calls == [
        ("rev-parse", "--is-inside-work-tree"),
        ("show", ":./x.md"),  # ./: relative to the root, which may lie below the top
        (
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--no-renames",
            "--diff-filter=ACMRT",
            "--relative",
        ),
    ]


def test_a_runner_saying_anything_but_true_is_no_repository(tmp_path: Path) -> None:
    assert Git(tmp_path, run=Scripted((0, b"false\n"))).is_repo() is False
    assert Git(tmp_path, run=Scripted((128, b"true\n"))).is_repo() is False


def test_without_a_head_staged_falls_back_to_the_index_listing(tmp_path: Path) -> None:
    runner = Scripted((128, b""), (0, b"a.md\0"))
    assert Git(tmp_path, run=runner).staged() == ["a.md"]
    assert runner.calls[-1] == ("ls-files", "--cached", "-z")


def test_staged_fails_when_git_cannot_list_the_index_either(tmp_path: Path) -> None:
    runner = Scripted((128, b""), (128, b""))
    with pytest.raises(EnvironmentFailure, match="git cannot list the staged files"):
        Git(tmp_path, run=runner).staged()


def test_a_name_that_is_not_utf8_survives_the_round_trip(tmp_path: Path) -> None:
    (name,) = Git(tmp_path, run=Scripted((0, b"caf\xe9.md\0"))).staged()
    assert name.encode("utf-8", "surrogateescape") == b"caf\xe9.md"


# -- a claim's evidence ------------------------------------------------------------------------


def test_head_of_reads_the_branch_and_commit_from_gits_files(repo: Path) -> None:
    from memkeeper.fs.git import head_of

    assert head_of(str(repo))[1] == ""  # no commit yet
    commit(repo, **{"a.md": b"a\n"})
    found = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    branch, head = head_of(str(repo / "src"))  # from below the top too
    assert (branch, head) == (head_of(str(repo))[0], found)
    git(repo, "pack-refs", "--all")  # the ref now lives in packed-refs only
    assert head_of(str(repo))[1] == found
    git(repo, "checkout", "-q", "--detach")
    assert head_of(str(repo)) == ("", found)
    assert branch in ("master", "main")


def test_changed_since_lists_committed_staged_and_untracked_changes(repo: Path) -> None:
    commit(repo, **{"a.md": b"a\n", "b.md": b"b\n"})
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    commit(repo, **{"a.md": b"a2\n"})
    put(repo, "b.md", b"b2\n")
    put(repo, "new.md", b"n\n")
    found = Git(repo)
    assert sorted(found.changed_since(base)) == ["a.md", "b.md", "new.md"]
    assert "2 files changed" in found.diffstat(base)
