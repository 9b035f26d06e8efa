"""The daemon's view of git with live pages: a page git checked out in its stored form gets
its live regions back without an edit being recorded, git's events re-render live pages once
the filter is installed, and the daemon's own write of the index is not git working."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

from memkeeper.daemon.plan import QUIET_S
from memkeeper.daemon.step import Daemon
from memkeeper.regions.gitform import stored
from tests.daemon.conftest import MODIFIED, RESCAN_S, actions

if TYPE_CHECKING:
    from memkeeper import Memory
    from memkeeper.clock import FakeClock


def install_filter(home: Memory) -> None:
    """The clean filter as ``install-hooks`` sets it up, for the live page."""
    (home.root / ".gitattributes").write_text("memory/status.md filter=memkeeper\n")
    with (home.root / ".git/config").open("a") as config:
        config.write('[filter "memkeeper"]\n\tclean = memkeeper filter clean %f\n')


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
    install_filter(home)
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


def test_a_git_command_working_when_live_pages_are_due_puts_their_render_off(
    home: Memory, clock: FakeClock
) -> None:
    """From a page's staging (its current file linked aside, which moves its change time) to
    its rename, a checkout would find it changed; and a render that waited for git to end
    would start as the script that ran git goes on. A git command just started in the tree
    counts as git working: the render comes once git has been quiet for the quiet period,
    and that look comes before anything is staged."""
    install_filter(home)
    patient = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    patient.caught_up(first=True)
    status = home.root / "memory/status.md"
    links: list[int] = []
    git_works = [True]

    def started(top: str, before: float | None) -> bool:
        links.append(status.stat().st_nlink)  # 2 once staged: linked aside
        return git_works[0]

    patient.stale.git_started = started
    home.claim("src/", ttl=60)
    clock.advance(QUIET_S)
    assert actions(patient.step(set())) == []  # git works: not now
    assert "src/" not in status.read_text()
    git_works[0] = False
    clock.advance(QUIET_S / 2)
    assert actions(patient.step(set())) == []  # not yet quiet for long enough
    clock.advance(QUIET_S / 2)
    assert actions(patient.step(set())) == ["regenerated"]
    assert "src/" in status.read_text()
    assert links[:3] == [1, 1, 2]  # git looked for before the staging, then in the rename


@pytest.mark.peer("git")
def test_a_mark_left_on_a_live_page_is_cleared_when_the_daemon_starts(
    home: Memory, clock: FakeClock
) -> None:
    """A daemon killed between a live page's mark and its rename leaves git taking the page
    as unchanged, a human's save of it unseen: the next daemon clears the mark as it starts,
    whether or not the page is rendered again."""
    install_filter(home)
    Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S).caught_up(first=True)  # rendered
    root = str(home.root)
    subprocess.run(["git", "-C", root, "add", "memory/status.md"], check=True)
    subprocess.run(["git", "-C", root, "update-index", "--assume-unchanged", "memory/status.md"],
                   check=True)  # fmt: skip
    listed = ["git", "-C", root, "ls-files", "-v", "memory/status.md"]
    assert subprocess.run(listed, capture_output=True, text=True).stdout.startswith("h ")
    patient = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    patient.stale.git_started = lambda top, before: False
    page = (home.root / "memory/status.md").stat()
    patient.caught_up(first=True)
    assert (home.root / "memory/status.md").stat().st_ino == page.st_ino  # not rendered again
    assert subprocess.run(listed, capture_output=True, text=True).stdout.startswith("H ")
    assert patient.stale.owed == set()
