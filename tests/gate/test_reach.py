"""Where a tool call's paths lead: the file a path reaches, the memory root found from that
file, the working tree a sweep covers, and what git sees changed there."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from memkeeper.gate import reach
from memkeeper.shell.effects import Sweep, Target


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``outer/repo`` (git, with a policy), a symlink in it, and a non-git memory root."""
    repo = tmp_path / "outer" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".memkeeper.yaml").write_text("version: 1\n")
    (repo / "CLAUDE.md").write_text("# Hi\n")
    (repo / "AGENTS.md").symlink_to("CLAUDE.md")
    (repo / "mem").symlink_to(repo / "memory")
    (repo / "memory").mkdir()
    plain = tmp_path / "plain"
    (plain / ".memkeeper").mkdir(parents=True)
    (plain / ".memkeeper" / "state.db").write_bytes(b"")
    (plain / "sub").mkdir()
    return tmp_path.resolve()


def test_a_followed_path_is_the_file_its_symlinks_reach(tree: Path) -> None:
    repo = tree / "outer" / "repo"
    assert reach.reached(str(repo / "AGENTS.md"), True) == str(repo / "CLAUDE.md")
    assert reach.reached(str(repo / "mem" / "x.md"), True) == str(repo / "memory" / "x.md")


def test_an_unfollowed_path_resolves_its_directories_but_not_itself(tree: Path) -> None:
    repo = tree / "outer" / "repo"
    assert reach.reached(str(repo / "AGENTS.md"), False) == str(repo / "AGENTS.md")
    assert reach.reached(str(repo / "mem" / "x.md"), False) == str(repo / "memory" / "x.md")


def test_the_root_is_found_from_the_file_not_from_any_session_directory(tree: Path) -> None:
    repo = str(tree / "outer" / "repo")
    assert reach.memory_root(os.path.join(repo, "memory", "new.md")) == repo
    assert reach.memory_root(os.path.join(repo, "deep", "missing", "x.md")) == repo
    assert reach.memory_root(str(tree / "outer" / "notes.md")) is None


def test_outside_git_the_nearest_directory_with_memkeeper_state_is_the_root(tree: Path) -> None:
    assert reach.memory_root(str(tree / "plain" / "sub" / "x.md")) == str(tree / "plain")


def test_a_git_repository_without_memkeeper_gives_way_to_a_root_inside_it(tree: Path) -> None:
    (tree / ".git").mkdir()  # e.g. a home directory kept in git
    assert reach.memory_root(str(tree / "plain" / "x.md")) == str(tree / "plain")
    assert reach.memory_root(str(tree / "elsewhere.md")) is None


def test_an_explicit_root_or_memkeeper_root_wins_and_bounds_what_is_judged(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = str(tree / "outer" / "repo")
    assert reach.memory_root(str(tree / "plain" / "x.md"), repo) is None
    monkeypatch.setenv("MEMKEEPER_ROOT", repo)
    assert reach.memory_root(os.path.join(repo, "x.md")) == repo
    assert reach.memory_root(str(tree / "plain" / "x.md")) is None


def test_a_directory_is_in_the_root_it_is_or_lies_in(tree: Path) -> None:
    repo = str(tree / "outer" / "repo")
    assert reach.memory_root(repo, directory=True) == repo
    assert reach.memory_root(os.path.join(repo, "memory"), directory=True) == repo
    assert reach.memory_root(str(tree / "outer"), directory=True) is None


def test_a_sweep_of_the_whole_tree_starts_at_the_working_tree(tree: Path) -> None:
    repo = tree / "outer" / "repo"
    whole = Sweep(str(repo / "mem"), "git stash", str(repo / "mem"), repo=True)
    done = reach.resolved(whole)
    assert done is not None
    assert (done.top, done.where) == (str(repo), str(repo / "memory"))
    assert reach.resolved(Sweep(str(tree), "git stash", str(tree), repo=True)) is None
    assert reach.root_of(whole) == str(repo)
    assert reach.root_of(Target(str(repo / "AGENTS.md"), "Write")) == str(repo)


def test_a_linked_worktree_is_its_own_working_tree(tree: Path) -> None:
    linked = tree / "linked"
    (linked / "sub").mkdir(parents=True)
    (linked / ".git").write_text("gitdir: /somewhere\n")
    assert reach.worktree(str(linked / "sub")) == str(linked)


STATUS = b" M CLAUDE.md\0M  memory/decisions.md\0MM both.md\0A  new.md\0?? memory/new.md\0" + (
    b"?? drafts/\0!! .memkeeper/\0 D gone.md\0"
)


def test_git_status_is_read_into_states_per_path() -> None:
    assert reach.parse_status(STATUS) == {
        "CLAUDE.md": {"unstaged"},
        "memory/decisions.md": {"staged"},
        "both.md": {"staged", "unstaged"},
        "new.md": {"staged"},
        "memory/new.md": {"untracked"},
        "drafts/": {"untracked-dir"},
        ".memkeeper/": {"ignored"},
        "gone.md": {"unstaged"},
    }


def test_a_file_inside_an_untracked_or_ignored_directory_takes_its_state() -> None:
    states = reach.parse_status(STATUS)
    assert reach.state_of("drafts/a/b.md", states) == {"untracked-dir"}
    assert reach.state_of("CLAUDE.md", states) == {"unstaged"}
    assert reach.state_of("AGENTS.md", states) == frozenset()


def test_git_is_asked_once_for_the_tree_and_a_failure_knows_nothing(tmp_path: Path) -> None:
    calls: list[tuple[Sequence[str], Path]] = []

    def fake(args: Sequence[str], cwd: Path) -> tuple[int, bytes]:
        calls.append((args, cwd))
        return (0, b" M a.md\0") if "--ignored" in args else (128, b"")

    assert reach.git_states(str(tmp_path), ignored=True, run=fake) == {"a.md": {"unstaged"}}
    assert reach.git_states(str(tmp_path), ignored=False, run=fake) == {}
    assert calls[0][0][:2] == ["status", "--porcelain=v1"]
    assert calls[0][1] == tmp_path
