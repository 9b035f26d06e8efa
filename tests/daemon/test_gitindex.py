"""Git's index told to look again at a live page the daemon rewrote, and the daemon's view of
git: a page git checked out in its stored form gets its live regions back without an edit
being recorded, and the daemon's own touch of the index is not git working."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.daemon.gitindex import look_again
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


@pytest.mark.peer("git")
def test_a_page_whose_size_changed_is_compared_by_content_after_look_again(
    tmp_path: Path,
) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "T")
    git(tmp_path, "config", "filter.x.clean", "sed s/^LIVE.*/LIVE/")
    (tmp_path / ".gitattributes").write_text("p.md filter=x\n")
    page = tmp_path / "p.md"
    page.write_text("notes\nLIVE 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    page.write_text("notes\nLIVE 22 and longer\n")  # what git stores is the same: "LIVE"
    assert git(tmp_path, "status", "--porcelain") == " M p.md\n"  # the size says modified
    assert look_again(str(tmp_path / ".git"), frozenset({b"p.md"}))
    assert git(tmp_path, "status", "--porcelain") == ""  # compared through the filter
    assert (
        git(tmp_path, "ls-files", "--stage", "p.md").split()[1]
        == git(tmp_path, "rev-parse", "HEAD:p.md").strip()
    )  # nothing staged changed
    assert not (tmp_path / ".git/index.lock").exists()
    (tmp_path / ".git/index.lock").write_text("")  # git is working: not now
    assert not look_again(str(tmp_path / ".git"), frozenset({b"p.md"}))
    assert (tmp_path / ".git/index.lock").read_text() == ""


def test_without_an_index_there_is_nothing_to_look_at(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert look_again(str(tmp_path / ".git"), frozenset({b"p.md"}))
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
    index.write_bytes(b"as look_again left it")
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
