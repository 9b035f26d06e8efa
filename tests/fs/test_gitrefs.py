"""A claim's branch tip and its worktree's ``HEAD``, read from git's files: loose refs, packed
refs, a linked worktree's common directory; empty where there is nothing to read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.fs.gitrefs import tips

if TYPE_CHECKING:
    from pathlib import Path

A, B = "a" * 40, "b" * 40


def repo(root: Path, head: str = "ref: refs/heads/main") -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n")
    return git


def test_a_loose_branch_and_the_head_are_read(tmp_path: Path) -> None:
    git = repo(tmp_path)
    (git / "refs" / "heads" / "main").write_text(A + "\n")
    (git / "refs" / "heads" / "feature").write_text(B + "\n")
    assert tips(str(tmp_path), "feature") == (B, A)


def test_a_packed_branch_is_read(tmp_path: Path) -> None:
    git = repo(tmp_path, head=A)
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{B} refs/heads/feature\n")
    assert tips(str(tmp_path), "feature") == (B, A)


def test_a_linked_worktree_reads_branches_from_the_common_directory(tmp_path: Path) -> None:
    main = repo(tmp_path / "main")
    (main / "refs" / "heads" / "feature").write_text(B + "\n")
    linked = main / "worktrees" / "wt"
    linked.mkdir(parents=True)
    (linked / "HEAD").write_text("ref: refs/heads/feature\n")
    (linked / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {linked}\n")
    assert tips(str(wt), "feature") == (B, B)


def test_nothing_to_read_is_empty(tmp_path: Path) -> None:
    assert tips(str(tmp_path / "nowhere"), "main") == ("", "")
    repo(tmp_path)
    assert tips(str(tmp_path), "") == ("", "")
    assert tips(str(tmp_path), "gone") == ("", "")
