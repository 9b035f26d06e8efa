"""Git's index kept up with a live page renamed into place under ``index.lock``: its entry
gets the new file's stat data when git stores the same blob, and nothing is renamed or
written while git holds the lock."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memkeeper.fs.gitindex import GIT_POLL_S, GIT_STARTING_S, LiveIndex, update_index
from memkeeper.fs.indexfile import Stat, size_offsets, stat_of


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def stat(path: Path) -> Stat:
    info = path.stat()
    return stat_of(info.st_ctime_ns, info.st_mtime_ns, info.st_dev, info.st_ino,
                   info.st_uid, info.st_gid, info.st_size)  # fmt: skip


@pytest.mark.peer("git")
def test_a_page_renamed_under_the_index_lock_gets_its_stat_data_when_git_stores_the_same(
    tmp_path: Path,
) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "filter.x.clean", "sed s/^LIVE.*/LIVE/")
    (tmp_path / ".gitattributes").write_text("p.md filter=x\n")
    page, temp = tmp_path / "p.md", tmp_path / "p.md.tmp"
    page.write_text("notes\nLIVE 1\n")
    git(tmp_path, "add", "-A")
    temp.write_text("notes\nLIVE 22 and longer\n")  # what git stores is the same: "LIVE"
    renamed: list[bool] = []

    def rename() -> None:
        assert (tmp_path / ".git/index.lock").exists()  # under git's lock
        temp.rename(page)
        renamed.append(True)

    files = lambda: {b"p.md": (stat(page), b"notes\nLIVE\n")}  # noqa: E731
    assert update_index(str(tmp_path / ".git"), files, rename=rename) is True
    assert renamed == [True]
    assert git(tmp_path, "diff-files", "--name-only") == ""  # the stat data match: no look
    assert not (tmp_path / ".git/index.lock").exists()
    page.write_text("notes changed\nLIVE 3\n")
    other = lambda: {b"p.md": (stat(page), b"notes changed\nLIVE\n")}  # noqa: E731
    assert update_index(str(tmp_path / ".git"), other) is None  # not the blob: modified
    assert git(tmp_path, "diff-files", "--name-only") == "p.md\n"


def test_while_git_holds_its_index_lock_nothing_is_renamed_or_written(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git/index.lock").write_text("")
    naps: list[float] = []
    done = update_index(
        str(tmp_path / ".git"), dict, rename=lambda: 1 / 0, tries=3, sleep=naps.append
    )
    assert done is False
    assert naps == [0.005, 0.005]
    assert (tmp_path / ".git/index.lock").read_text() == ""


def test_without_an_index_the_page_is_renamed_and_nothing_written(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    renamed: list[bool] = []
    assert update_index(str(tmp_path / ".git"), dict, rename=lambda: renamed.append(True)) is None
    assert renamed == [True]
    assert sorted(p.name for p in (tmp_path / ".git").iterdir()) == []


@pytest.mark.peer("git")
def test_a_staged_pages_entry_is_written_before_its_rename_and_committed_right_after(
    tmp_path: Path,
) -> None:
    """Issue 22 item 11: a git status (which takes no lock) reading the index between a live
    page's rename and the commit of its entry saw the new page beside the old entry, and
    called it modified. The entry is now written from the staged file before the rename
    and committed right after it; the change time, which the rename moves, follows."""
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "filter.x.clean", "sed s/^LIVE.*/LIVE/")
    (tmp_path / ".gitattributes").write_text("p.md filter=x\n")
    page, temp = tmp_path / "p.md", tmp_path / "p.md.tmp"
    page.write_text("notes\nLIVE 1\n")
    git(tmp_path, "add", "-A")
    temp.write_text("notes\nLIVE 22 and longer\n")
    stored = b"notes\nLIVE\n"
    seen: list[int] = []

    def rename() -> None:
        written = (tmp_path / ".git/index.lock").read_bytes()  # the new index, not committed
        offsets = size_offsets(written)
        assert offsets is not None
        seen.append(int.from_bytes(written[offsets[b"p.md"] : offsets[b"p.md"] + 4], "big"))
        temp.rename(page)

    git_dir = str(tmp_path / ".git")
    staged = lambda: {b"p.md": (stat(temp), stored)}  # noqa: E731
    files = lambda: {b"p.md": (stat(page), stored)}  # noqa: E731
    assert update_index(git_dir, files, rename=rename, staged=staged) is True
    assert seen == [len(b"notes\nLIVE 22 and longer\n")]
    assert git(tmp_path, "diff-files", "--name-only") == ""  # the change time followed
    assert not (tmp_path / ".git/index.lock").exists()


def test_a_page_waits_for_a_git_command_just_started_in_the_tree_then_is_renamed(
    tmp_path: Path,
) -> None:
    """Issue 22 item 11: a git command that read the index before the rename and looks at the
    page after it would see the new page beside the old entry (a rebase refuses the page):
    the rename waits while one that has just started works in the tree."""
    (tmp_path / ".git").mkdir()
    asked: list[str] = []
    naps: list[float] = []
    renamed: list[int] = []

    def starting(top: str, seen: set[str]) -> bool:
        asked.append(top)
        return len(asked) <= 3  # git works for three looks, then is done

    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_starting=starting,
                      sleep=naps.append)  # fmt: skip
    index.rename("p.md", lambda: renamed.append(len(asked)))
    assert renamed == [5]  # the fourth look found git done; the fifth, under the lock, too
    assert naps == [GIT_POLL_S] * 3
    assert asked == [str(tmp_path)] * 5


def test_a_git_command_started_while_the_lock_is_taken_sends_the_rename_back_to_waiting(
    tmp_path: Path,
) -> None:
    """The last look, under the index lock right before the rename, reads only processes
    started since the wait's last look; one that finds git lets go of the lock untouched."""
    (tmp_path / ".git").mkdir()
    looks: list[tuple[bool, frozenset[str]]] = []
    renamed: list[bool] = []

    def starting(top: str, seen: set[str]) -> bool:
        locked = (tmp_path / ".git/index.lock").exists()
        looks.append((locked, frozenset(seen)))
        seen.add(f"pid{len(looks)}")
        return locked and len(looks) == 2  # git started between the first look and the lock

    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_starting=starting,
                      sleep=lambda s: None)  # fmt: skip
    index.rename("p.md", lambda: renamed.append((tmp_path / ".git/index.lock").exists()))
    assert renamed == [True]
    assert looks == [
        (False, frozenset()),  # the wait: no git
        (True, {"pid1"}),  # under the lock: a git started since pid1 was seen
        (False, frozenset()),  # the lock let go: the wait again
        (True, {"pid3"}),  # under the lock: none started since
    ]
    assert sorted(p.name for p in (tmp_path / ".git").iterdir()) == []


def test_a_git_command_that_never_ends_delays_the_rename_by_a_bounded_time(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    naps: list[float] = []
    renamed: list[bool] = []
    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_starting=lambda top, seen: True,
                      sleep=naps.append)  # fmt: skip
    index.rename("p.md", lambda: renamed.append(True))
    assert renamed == [True]
    assert sum(naps) == pytest.approx(GIT_STARTING_S)  # then renamed: no look under the lock
