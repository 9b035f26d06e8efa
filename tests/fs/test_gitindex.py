"""Git's index kept up with a live page renamed into place under ``index.lock``: its entry
gets the new file's stat data when git stores the same blob, and nothing is renamed or
written while git holds the lock; before, the entry is marked "assume valid" and the git
commands that may have read it unmarked are waited for."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memkeeper.fs.gitindex import (
    GIT_POLL_S,
    GIT_STARTING_S,
    LiveIndex,
    mark_index,
    update_index,
)
from memkeeper.fs.indexfile import Stat, stat_of


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def stat(path: Path) -> Stat:
    info = path.stat()
    return stat_of(info)


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


def tracked(
    root: Path, old: str = "notes\nLIVE 1\n", new: str = "notes\nLIVE 22 and longer\n"
) -> tuple[Path, Path]:
    """A repository whose ``p.md`` is stored through a filter ("LIVE …" stored as "LIVE"),
    committed as ``old``, and a ``new`` version of it staged beside it (another file: its stat data
    differ). ``LiveIndex`` finds what git stores of a page by memkeeper's own form, which
    keeps a page without regions as it is: its tests stage the same bytes again."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "filter.x.clean", "sed s/^LIVE.*/LIVE/")
    (root / ".gitattributes").write_text("p.md filter=x\n")
    page, temp = root / "p.md", root / "p.md.tmp"
    page.write_text(old)
    git(root, "add", "-A")
    git(root, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "1")
    temp.write_text(new)
    return page, temp


@pytest.mark.peer("git")
def test_a_marked_entry_is_up_to_date_for_git_without_a_look_until_the_rename_unmarks_it(
    tmp_path: Path,
) -> None:
    """Issue 22 item 11: a git status reads the index, then looks at the files; a page renamed
    in between was modified for it (the old entry beside the new page), whatever the order of
    rename and index. Marked "assume valid" first, the entry is up to date for any git that
    reads it, renamed page or not; the rename's hold gives it the new stat data and unmarks
    it."""
    page, temp = tracked(tmp_path)
    git_dir = str(tmp_path / ".git")
    now = lambda: {b"p.md": (stat(page), b"notes\nLIVE\n")}  # noqa: E731
    assert mark_index(git_dir, now) is True
    assert git(tmp_path, "ls-files", "-v") == "H .gitattributes\nh p.md\n"
    assert mark_index(git_dir, now) is None  # marked already
    assert mark_index(git_dir, lambda: {b"untracked.md": (stat(page), b"")}) is None
    temp.rename(page)  # as a status might see it: the old stat data, the new page
    assert git(tmp_path, "status", "--porcelain", "--untracked-files=no") == ""
    temp.write_text("notes\nLIVE 333 and longer still\n")
    files = lambda: {b"p.md": (stat(page), b"notes\nLIVE\n")}  # noqa: E731
    assert update_index(git_dir, files, rename=lambda: temp.rename(page), unmark=[b"p.md"])
    assert git(tmp_path, "ls-files", "-v") == "H .gitattributes\nH p.md\n"
    assert git(tmp_path, "diff-files", "--name-only") == ""  # the stat data match: no look
    assert not (tmp_path / ".git/index.lock").exists()


@pytest.mark.peer("git")
def test_a_page_waits_for_git_just_started_is_marked_waits_for_git_started_before_then_renamed(
    tmp_path: Path,
) -> None:
    """First the git commands working now (so that the mark is held for moments), then the
    ones started by the time the mark was committed (they may have read the index unmarked):
    each asked with the time of its start, until none is left."""
    page, temp = tracked(tmp_path, *["notes\nLIVE\n"] * 2)
    asked: list[tuple[float | None, str]] = []
    naps: list[float] = []
    renamed: list[str] = []

    def started(top: str, before: float | None) -> bool:
        assert top == str(tmp_path)
        asked.append((before, git(tmp_path, "ls-files", "-v", "p.md")))
        return len(asked) in (1, 2, 4)  # git works for two looks, and one after the mark

    def rename() -> None:
        renamed.append(git(tmp_path, "ls-files", "-v", "p.md"))
        assert (tmp_path / ".git/index.lock").exists()  # under git's lock
        temp.rename(page)

    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_started=started,
                      clock=lambda: 42.0, sleep=naps.append)  # fmt: skip
    assert index.rename("p.md", rename, str(temp)) is True
    assert asked == [(None, "H p.md\n")] * 3 + [(42.0, "h p.md\n")] * 2
    assert naps == [GIT_POLL_S] * 3
    assert renamed == ["h p.md\n"]
    assert git(tmp_path, "ls-files", "-v", "p.md") == "H p.md\n"
    assert git(tmp_path, "diff-files", "--name-only") == ""
    assert index.owed == set()


@pytest.mark.peer("git")
def test_a_page_modified_for_git_or_untracked_is_not_marked_nor_waited_for_after(
    tmp_path: Path,
) -> None:
    """A human's note in the page: git must keep seeing it (``git commit -a``), and a rename
    changes nothing git says of it."""
    page, temp = tracked(tmp_path, "notes\nLIVE\n", "notes, a human's\nLIVE\n")
    page.write_text("notes, a human's\nLIVE\n")
    looks: list[str] = []

    def started(top: str, before: float | None) -> bool:
        looks.append(git(tmp_path, "ls-files", "-v", "p.md"))
        return False

    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_started=started)
    assert index.rename("p.md", lambda: temp.rename(page)) is False
    assert looks == ["H p.md\n"]  # the look before the mark; none after
    assert git(tmp_path, "diff-files", "--name-only") == "p.md\n"
    renamed: list[bool] = []
    assert index.rename("new.md", lambda: renamed.append(True)) is False  # not tracked
    assert renamed == [True]
    assert len(looks) == 2


@pytest.mark.peer("git")
def test_the_staged_page_is_read_before_the_lock_and_only_its_own_rename_refreshes_the_entry(
    tmp_path: Path,
) -> None:
    """The pages are read (and their stored form computed) before the lock is taken, so that
    it is held for the index alone; after the rename the entry gets the stat data of the file
    in place only when it is the staged one (another's file is not vouched for)."""
    page, temp = tracked(tmp_path, *["notes\nLIVE\n"] * 2)
    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_started=lambda top, before: False)
    other = tmp_path / "other"
    other.write_text("notes\nLIVE\n")
    assert index.rename("p.md", lambda: other.rename(page), str(temp)) is True  # the unmark
    assert git(tmp_path, "ls-files", "-v", "p.md") == "H p.md\n"  # unmarked all the same
    assert git(tmp_path, "diff-files", "--name-only") == "p.md\n"  # not refreshed
    assert index.rename("p.md", lambda: temp.rename(page), str(temp)) is True
    assert git(tmp_path, "diff-files", "--name-only") == ""


@pytest.mark.peer("git")
def test_a_rename_that_fails_leaves_the_page_unmarked(tmp_path: Path) -> None:
    """A writer got in first (the daemon's guarded replace refuses): git must see its save."""
    tracked(tmp_path, *["notes\nLIVE\n"] * 2)
    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"), git_started=lambda top, before: False)

    def raced() -> None:
        assert git(tmp_path, "ls-files", "-v", "p.md") == "h p.md\n"
        raise OSError("raced")

    with pytest.raises(OSError, match="raced"):
        index.rename("p.md", raced)
    assert git(tmp_path, "ls-files", "-v", "p.md") == "H p.md\n"
    assert not (tmp_path / ".git/index.lock").exists()


def test_a_git_command_that_never_ends_delays_the_rename_by_a_bounded_time(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git/index").write_bytes(b"")  # no index this reads: nothing to mark
    naps: list[float] = []
    renamed: list[bool] = []
    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"),
                      git_started=lambda top, before: True, sleep=naps.append)  # fmt: skip
    assert index.rename("p.md", lambda: renamed.append(True)) is False
    assert renamed == [True]
    assert sum(naps) == pytest.approx(GIT_STARTING_S)  # nothing marked: no second wait


@pytest.mark.peer("git")
def test_a_marked_page_waits_a_bounded_time_for_a_git_command_that_never_ends(
    tmp_path: Path,
) -> None:
    page, temp = tracked(tmp_path, *["notes\nLIVE\n"] * 2)
    naps: list[float] = []
    index = LiveIndex(str(tmp_path), str(tmp_path / ".git"),
                      git_started=lambda top, before: True, sleep=naps.append)  # fmt: skip
    assert index.rename("p.md", lambda: temp.rename(page)) is True
    assert sum(naps) == pytest.approx(2 * GIT_STARTING_S)  # before the mark, and after
    assert git(tmp_path, "ls-files", "-v", "p.md") == "H p.md\n"


@pytest.mark.peer("git")
def test_a_page_git_keeps_locked_out_is_renamed_marked_and_owed_until_a_flush(
    tmp_path: Path,
) -> None:
    page, temp = tracked(tmp_path, *["notes\nLIVE\n"] * 2)
    git_dir = tmp_path / ".git"
    index = LiveIndex(str(tmp_path), str(git_dir), git_started=lambda top, before: False,
                      sleep=lambda s: None)  # fmt: skip
    calls: list[bool] = []

    def rename() -> None:
        calls.append((git_dir / "index.lock").exists())
        temp.rename(page)

    files = lambda: {b"p.md": (stat(page), b"notes\nLIVE\n")}  # noqa: E731
    assert mark_index(str(git_dir), files) is True  # marked as the first step would
    (git_dir / "index.lock").write_text("")  # git holds its lock from now on
    assert index.rename("p.md", rename) is False
    assert calls == [True]  # git's lock, not ours: renamed anyway
    assert index.owed == {"p.md"}
    assert index.flush() is False  # still held
    (git_dir / "index.lock").unlink()
    assert git(tmp_path, "status", "--porcelain", "--untracked-files=no") == ""  # marked
    assert index.flush() is True
    assert index.owed == set()
    assert git(tmp_path, "ls-files", "-v", "p.md") == "H p.md\n"
    assert git(tmp_path, "diff-files", "--name-only") == ""
