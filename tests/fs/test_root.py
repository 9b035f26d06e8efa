from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs.root import find_root, main_worktree, relative_path
from memkeeper.names import ROOT_ENV

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def no_root_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOT_ENV, raising=False)


def git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def main_and_linked(tmp_path: Path) -> tuple[Path, Path]:
    """A real repository with one commit and a linked worktree beside it."""
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    (main / "CLAUDE.md").write_text("# Project\n")
    git(main, "add", "CLAUDE.md")
    git(main, "commit", "-q", "-m", "first")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    (linked / "src" / "deep").mkdir(parents=True)
    return main, linked


def fake_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    return repo


# -- find_root: the order of precedence ---------------------------------------------------


def test_explicit_root_beats_the_environment_and_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = fake_repo(tmp_path)
    (tmp_path / "explicit").mkdir()
    (tmp_path / "env").mkdir()
    monkeypatch.setenv(ROOT_ENV, str(tmp_path / "env"))
    assert (
        Path(find_root(tmp_path / "explicit", cwd=repo / "a")) == (tmp_path / "explicit").resolve()
    )


def test_environment_beats_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = fake_repo(tmp_path)
    (tmp_path / "env").mkdir()
    monkeypatch.setenv(ROOT_ENV, str(tmp_path / "env"))
    assert Path(find_root(cwd=repo / "a")) == (tmp_path / "env").resolve()


def test_an_empty_environment_variable_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = fake_repo(tmp_path)
    monkeypatch.setenv(ROOT_ENV, "")
    assert Path(find_root(cwd=repo / "a" / "b")) == repo.resolve()


def test_git_top_beats_the_current_directory(tmp_path: Path) -> None:
    repo = fake_repo(tmp_path)
    assert Path(find_root(cwd=repo / "a" / "b")) == repo.resolve()


def test_outside_any_repository_the_root_is_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    if main_worktree(tmp_path) is not None:
        pytest.skip("the temporary directory is itself inside a git repository")
    assert Path(find_root(cwd=tmp_path / "plain")) == (tmp_path / "plain").resolve()


def test_a_root_that_is_not_a_directory_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / "file", tmp_path / "missing"):
        with pytest.raises(Invalid, match="not a directory"):
            find_root(bad, cwd=tmp_path)


def test_an_environment_root_that_is_missing_is_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ROOT_ENV, str(tmp_path / "missing"))
    with pytest.raises(Invalid):
        find_root(cwd=tmp_path)


# -- find_root: git worktrees and submodules ----------------------------------------------


@pytest.mark.peer("git")
@needs_git
def test_a_linked_worktree_shares_the_main_worktrees_root(
    main_and_linked: tuple[Path, Path],
) -> None:
    main, linked = main_and_linked
    assert (linked / ".git").is_file()
    assert Path(find_root(cwd=linked)) == main.resolve()
    assert Path(find_root(cwd=linked / "src" / "deep")) == main.resolve()


@pytest.mark.peer("git")
@needs_git
def test_the_main_worktree_is_its_own_root(main_and_linked: tuple[Path, Path]) -> None:
    main, _ = main_and_linked
    (main / "sub").mkdir()
    assert Path(find_root(cwd=main / "sub")) == main.resolve()


def test_a_submodule_like_git_file_without_commondir_is_its_own_root(tmp_path: Path) -> None:
    outer = fake_repo(tmp_path)
    (outer / ".git" / "modules" / "sub").mkdir(parents=True)
    sub = outer / "vendor" / "sub"
    (sub / "inner").mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    assert Path(find_root(cwd=sub / "inner")) == sub.resolve()


def test_a_git_file_without_a_gitdir_line_is_its_own_root(tmp_path: Path) -> None:
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / ".git").write_text("garbage\n")
    assert main_worktree(tmp_path / "odd") == str(tmp_path / "odd")


# -- relative_path ---------------------------------------------------------------------------


def test_a_path_is_relative_to_the_current_directory_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    assert relative_path(tmp_path, "CLAUDE.md", cwd=tmp_path / "docs") == "docs/CLAUDE.md"
    assert relative_path(tmp_path, "../AGENTS.md", cwd=tmp_path / "docs") == "AGENTS.md"
    assert relative_path(tmp_path, "./a//b.md", cwd=tmp_path) == "a/b.md"


def test_a_path_is_relative_to_the_root_when_the_current_directory_is_outside(
    tmp_path: Path,
) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    assert relative_path(root, "memory/x.md", cwd=elsewhere) == "memory/x.md"


def test_a_sibling_whose_name_extends_the_roots_is_outside(tmp_path: Path) -> None:
    root, sibling = tmp_path / "root", tmp_path / "root-2"
    root.mkdir()
    sibling.mkdir()
    assert relative_path(root, "x.md", cwd=sibling) == "x.md"
    with pytest.raises(Invalid, match="outside"):
        relative_path(root, str(sibling / "x.md"), cwd=root)


@pytest.mark.parametrize("escape", ["../x.md", "a/../../x.md", "..", "/etc/passwd"])
def test_a_path_escaping_the_root_is_invalid(tmp_path: Path, escape: str) -> None:
    with pytest.raises(Invalid, match="outside the memory root") as caught:
        relative_path(tmp_path, escape, cwd=tmp_path)
    assert caught.value.exit_code == 2


def test_an_absolute_path_inside_the_root_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert relative_path(tmp_path, str(tmp_path / "a" / "b.md"), cwd=tmp_path / "sub") == "a/b.md"


@pytest.mark.parametrize("itself", [".", "", "a/..", "./"])
def test_naming_the_root_itself_is_invalid(tmp_path: Path, itself: str) -> None:
    with pytest.raises(Invalid):
        relative_path(tmp_path, itself, cwd=tmp_path)


def test_naming_the_root_by_its_absolute_path_is_invalid(tmp_path: Path) -> None:
    with pytest.raises(Invalid, match="root directory"):
        relative_path(tmp_path, str(tmp_path), cwd=tmp_path)


def test_a_path_with_a_nul_character_is_invalid(tmp_path: Path) -> None:
    with pytest.raises(Invalid, match=r"^CLAUDE\.md\\0x: a path cannot contain a NUL"):
        relative_path(tmp_path, "CLAUDE.md\x00x", cwd=tmp_path)
