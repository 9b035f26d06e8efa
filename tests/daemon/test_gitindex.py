"""Git's index told to look again at a live page the daemon rewrote, and the daemon's view of
git: a page git checked out in its stored form gets its live regions back without an edit
being recorded, and the daemon's own touch of the index is not git working."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.daemon.gitindex import update_index
from memkeeper.daemon.indexfile import Stat, stat_of
from memkeeper.daemon.plan import QUIET_S
from memkeeper.daemon.step import Daemon
from memkeeper.regions.gitform import stored
from tests.daemon.conftest import MODIFIED, RESCAN_S, actions

if TYPE_CHECKING:
    from memkeeper import Memory
    from memkeeper.clock import FakeClock


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


def test_a_page_git_checked_out_in_its_stored_form_gets_its_regions_back_silently(
    home: Memory, clock: FakeClock
) -> None:
    patient = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    patient.caught_up(first=True)
    status = home.root / "memory/status.md"
    live = status.read_bytes()
    head = home.events()[-1].id
    status.write_bytes(stored(live, "memory/status.md"))  # git checks the page out
    git_dir = home.root / ".git"
    assert patient.step({(MODIFIED, str(status)), (MODIFIED, str(git_dir / "index"))}) == []
    clock.advance(QUIET_S)
    outcomes = patient.step(set())
    assert actions(outcomes) == ["regenerated"]
    assert outcomes[0].detail == "live regions put back after git"
    assert status.read_bytes() == live
    assert [e.type for e in home.events() if e.id > head] == []  # no edit: nobody's words


def test_the_daemons_own_touch_of_the_index_is_not_git_working(home: Memory) -> None:
    daemon = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    index = home.root / ".git/index"
    index.write_bytes(b"as the daemon left it")
    daemon.own_index = daemon._index_id()
    daemon._watch_git(True)
    assert not daemon.git_busy
    index.write_bytes(b"git wrote it since")
    daemon._watch_git(True)
    assert daemon.git_busy


def test_with_the_filter_installed_gits_changes_re_render_the_live_pages_alone(
    home: Memory, clock: FakeClock
) -> None:
    (home.root / ".gitattributes").write_text("memory/status.md filter=memkeeper\n")
    with (home.root / ".git/config").open("a") as config:
        config.write('[filter "memkeeper"]\n\tclean = memkeeper filter clean %f\n')
    patient = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    patient.caught_up(first=True)
    lock = home.root / ".git/index.lock"
    lock.write_text("")
    claude = home.root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make all"))
    assert patient.step({(MODIFIED, str(claude)), (MODIFIED, str(lock))}) == []
    lock.unlink()
    assert patient.step({(MODIFIED, str(lock))}) == []
    clock.advance(QUIET_S)
    assert actions(patient.step(set())) == ["indexed", "regenerated"]
    status = (home.root / "memory/status.md").read_text()
    assert "git section.external_edit CLAUDE.md" in status  # git stores a placeholder
