"""The daemon's executor, driven directly: a ``Daemon`` on a copy of sample-repo with a fake
clock, fed one batch of ``(change, absolute path)`` at a time, answering with ``Outcome``s."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.daemon.plan import INDEX_QUIET_S, QUIET_S, Outcome
from memkeeper.daemon.step import Daemon
from tests.daemon.conftest import (
    ADDED,
    DELETED,
    MODIFIED,
    RESCAN_S,
    actions,
    append_line,
    changed,
)

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock

MANAGED = {
    *("AGENTS.md", "CLAUDE.md", "memory/architecture.md"),
    *("memory/decisions.md", "memory/risks.md", "memory/status.md"),
}


# -- starting --------------------------------------------------------------------------------------


def test_a_new_daemon_knows_the_managed_files_but_not_the_private_ones(home: Memory) -> None:
    fresh = Daemon(home.workspace, RESCAN_S)
    assert fresh.known.files == MANAGED
    assert fresh.known.dirs == {"", ".memkeeper", "memory"}  # not memory/scratch: private only


def test_it_watches_absolute_directories_and_must_rewatch_only_when_they_change(
    home: Memory,
) -> None:
    fresh = Daemon(home.workspace, RESCAN_S)
    root = str(home.root)
    git = f"{root}/.git"  # the sample is a git repository: git's directory is watched too
    assert fresh.watch_paths() == [root, f"{root}/.memkeeper", f"{root}/memory", git]
    assert not fresh.must_rewatch()
    (home.root / "memory/teams").mkdir()
    (home.root / "memory/teams/search.md").write_text("# Search\n")
    fresh.step({(ADDED, f"{root}/memory/teams")})
    assert fresh.must_rewatch()
    assert fresh.watch_paths()[-2:] == [f"{root}/memory/teams", git]
    assert not fresh.must_rewatch()


def test_the_first_catch_up_says_started_and_renders_every_region(home: Memory) -> None:
    outcomes = Daemon(home.workspace, RESCAN_S).caught_up(first=True)
    assert [(o.action, o.path) for o in outcomes] == [
        ("started", str(home.root)),
        ("regenerated", "memory/status.md"),
    ]
    assert outcomes[0].detail == "6 managed file(s), 3 directories"
    assert outcomes[1].detail == "rendered claims, events, decisions-feed"


def test_a_later_catch_up_says_rewatched_and_indexes_what_changed_unwatched(
    daemon: Daemon, home: Memory
) -> None:
    changed(home.root, "AGENTS.md", append_line)  # while the watch was being restarted
    outcomes = daemon.caught_up(first=False)
    assert actions(outcomes)[:2] == ["rewatched", "indexed"]
    assert (outcomes[0].path, outcomes[1].path) == (None, "AGENTS.md")


def test_a_quiet_tick_with_nothing_new_does_nothing(daemon: Daemon) -> None:
    assert daemon.step(set()) == []
    assert daemon.caught_up(first=False) == [
        Outcome("rewatched", None, "6 managed file(s), 3 directories")
    ]


def test_an_event_no_region_shows_rewrites_no_page_and_records_nothing(home: Memory) -> None:
    page = home.root / "memory/status.md"
    page.write_text(
        "# Status\n\n<!-- memkeeper:generated source=events types=entry.appended -->\n"
        "<!-- memkeeper:end -->\n"
    )
    fresh = Daemon(home.workspace, RESCAN_S, quiet_s=0)
    fresh.caught_up(first=True)
    before = (page.read_bytes(), page.stat().st_mtime_ns)
    last = home.events()[-1].id
    home.emit("task.done", {"n": 1})
    assert fresh.step(set()) == []  # rendered again, the same text: nothing written
    assert (page.read_bytes(), page.stat().st_mtime_ns) == before
    assert [e.type for e in home.events(since=last)] == ["task.done"]
    home.append("memory/decisions.md", "Use etcd.")
    assert "regenerated" in actions(fresh.step(set()))
    assert b"Use etcd." in page.read_bytes()


# -- saves ---------------------------------------------------------------------------------------


def test_a_human_save_is_indexed_with_its_section_and_the_event_it_recorded(
    daemon: Daemon, home: Memory
) -> None:
    batch = changed(home.root, "CLAUDE.md", lambda t: t.replace("make build", "make"))
    (indexed, regenerated) = daemon.step(batch)
    assert (indexed.action, indexed.path, indexed.section) == (
        "indexed",
        "CLAUDE.md",
        "inventory-service/build",
    )
    assert indexed.detail == "edited outside memkeeper, now rev 2"
    (event,) = [e for e in home.events() if e.id == indexed.event]
    assert (event.type, event.actor) == ("section.external_edit", "external")
    assert regenerated.action == "regenerated"  # the edit is news for the events region


def test_a_save_that_changes_nothing_and_the_daemons_own_writes_are_skipped(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    assert daemon.step(changed(home.root, "AGENTS.md", lambda t: t)) == []
    agent = Memory(home.root, "agent-a", clock=clock)
    agent.patch("CLAUDE.md#build", "- make\n\n", expect_rev=1)
    outcomes = daemon.step({(MODIFIED, str(home.root / "CLAUDE.md"))})
    assert actions(outcomes) == ["regenerated"]
    assert "section.external_edit" not in [e.type for e in home.events()]


def test_paths_outside_the_root_in_git_or_in_the_home_are_not_looked_at(
    daemon: Daemon, home: Memory
) -> None:
    (home.root / "AGENTS.md").write_text("# Changed\n")  # would be indexed if looked at
    outside = {
        (MODIFIED, "/etc/hosts"),
        (MODIFIED, str(home.root / ".git/index")),
        (MODIFIED, str(home.root / ".memkeeper/locks/AGENTS.md.lock")),
        (MODIFIED, str(home.root / "memory/.AGENTS.md.memkeeper-77.tmp")),
    }
    assert daemon.step(outside) == []


def test_broken_markers_are_an_error_and_the_edit_is_still_indexed(
    daemon: Daemon, home: Memory
) -> None:
    def drop_first_end_marker(text: str) -> str:
        lines = text.splitlines(keepends=True)
        at = next(n for n, line in enumerate(lines) if "memkeeper:end" in line)
        return "".join(lines[:at] + lines[at + 1 :])

    outcomes = daemon.step(changed(home.root, "memory/status.md", drop_first_end_marker))
    assert actions(outcomes) == ["error", "indexed"]
    assert outcomes[0].path == "memory/status.md"
    assert "start marker nested in the region opened at line 8" in outcomes[0].detail
    assert outcomes[1].event is not None


def test_an_error_is_said_once_until_a_regen_succeeds_then_again(
    daemon: Daemon, home: Memory
) -> None:
    status = home.root / "memory/status.md"
    good = status.read_text()
    broken = good.replace("<!-- memkeeper:generated source=events -->", "<!-- memkeeper:generated")

    def save(text: str) -> list[str]:
        status.write_text(text)
        return actions(daemon.step({(MODIFIED, str(status))}))

    assert save(broken).count("error") == 1
    assert save(broken + "\nmore\n").count("error") == 0  # the same message again: quiet
    assert "error" not in save(good)
    assert save(broken).count("error") == 1


def test_a_hand_edit_inside_a_region_opens_a_reconciliation_and_keeps_the_text(
    daemon: Daemon, home: Memory
) -> None:
    batch = changed(home.root, "memory/status.md", lambda t: t.replace("_No live claims._", "mine"))
    outcomes = daemon.step(batch)
    (opened,) = [o for o in outcomes if o.action == "reconcile"]
    assert opened.detail.startswith("region claims (line 8) edited by hand: reconciliation #1")
    assert opened.detail.endswith("— memkeeper reconcile show 1")
    assert "mine" in (home.root / "memory/status.md").read_text()


# -- files and directories coming and going -------------------------------------------------------


def test_a_deleted_file_is_gone_and_indexed_again_when_it_comes_back(
    daemon: Daemon, home: Memory
) -> None:
    risks = home.root / "memory/risks.md"
    kept = risks.read_text()
    risks.unlink()
    assert daemon.step({(DELETED, str(risks))}) == [
        Outcome("gone", "memory/risks.md", "deleted or renamed away; watching for it")
    ]
    assert "memory/risks.md" not in daemon.known.files
    assert daemon.step({(DELETED, str(risks))}) == []  # said once
    risks.write_text(kept + "\nmore\n")
    assert actions(daemon.step({(ADDED, str(risks))}))[0] == "indexed"
    assert "memory/risks.md" in daemon.known.files


def test_a_managed_file_replaced_by_a_symlink_is_gone_not_followed(
    daemon: Daemon, home: Memory
) -> None:
    agents = home.root / "AGENTS.md"
    shutil.move(agents, home.root / "elsewhere.md")
    os.symlink(home.root / "elsewhere.md", agents)
    (gone,) = daemon.step({(ADDED, str(agents))})
    assert (gone.action, gone.path) == ("gone", "AGENTS.md")


def test_a_file_created_unannounced_is_found_by_the_rescan_timer(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    (home.root / "memory/new.md").write_text("# New\n\nhi\n")
    clock.advance(RESCAN_S - 1)
    assert daemon.step(set()) == []
    clock.advance(1)
    assert daemon.step(set()) == [Outcome("indexed", "memory/new.md", "first seen, indexed")]
    assert daemon.step(set()) == []  # the next rescan is RESCAN_S away again


def test_a_policy_edit_reloads_and_forgets_files_it_no_longer_manages(
    daemon: Daemon, home: Memory
) -> None:
    policy = home.root / ".memkeeper.yaml"
    rule = "  - path: AGENTS.md\n    class: private\n"
    policy.write_text(policy.read_text().replace("files:\n", "files:\n" + rule, 1))
    outcomes = daemon.step({(MODIFIED, str(policy))})
    assert outcomes[0] == Outcome("reloaded", ".memkeeper.yaml", "5 managed file(s), 3 directories")
    assert "AGENTS.md" not in daemon.known.files
    assert daemon.step(changed(home.root, "AGENTS.md", append_line)) == []


def test_a_broken_policy_is_one_error_and_saves_wait_until_it_is_fixed(
    daemon: Daemon, home: Memory
) -> None:
    policy = home.root / ".memkeeper.yaml"
    good = policy.read_text()
    policy.write_text(good.replace("class: append-only", "class: apend-only", 1))
    (error,) = daemon.step({(MODIFIED, str(policy))})
    assert (error.action, error.path) == ("error", None)
    assert "unknown class 'apend-only'" in error.detail
    assert daemon.known.files == MANAGED  # the old policy still says what is managed
    # indexing needs the policy on disk: the save fails with the same error, not said again
    assert daemon.step(changed(home.root, "memory/decisions.md", append_line)) == []
    policy.write_text(good)
    outcomes = daemon.step({(MODIFIED, str(policy))})
    assert [(o.action, o.path) for o in outcomes][:2] == [
        ("reloaded", ".memkeeper.yaml"),
        ("indexed", "memory/decisions.md"),
    ]


# -- claims --------------------------------------------------------------------------------------


def test_a_claim_is_expired_when_the_clock_passes_its_expiry_and_not_before(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    claim = Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    assert actions(daemon.step(set())) == ["regenerated"]  # the grant is news for the page
    assert daemon.known.next_expiry == claim.expires_at
    clock.advance(59.9)
    assert daemon.step(set()) == []
    clock.advance(0.1)
    expired, regenerated = daemon.step(set())
    assert (expired.action, expired.detail) == ("expired", "claim c1 of agent-b on src/")
    assert regenerated.action == "regenerated"
    assert daemon.known.next_expiry is None
    assert "_No live claims._" in (home.root / "memory/status.md").read_text()


# -- quiet: a change is acted on once it has stopped changing ------------------------------------


@pytest.fixture
def patient(home: Memory) -> Daemon:
    """A started daemon with the production quiet period."""
    started = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    started.caught_up(first=True)
    return started


def test_a_save_in_two_writes_is_indexed_once_after_it_has_been_quiet(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    path = home.root / "CLAUDE.md"
    whole = path.read_text().replace("make build", "make all")
    path.write_text(whole[: len(whole) // 2])  # the first chunk of an editor's save
    assert patient.step({(MODIFIED, str(path))}) == []
    clock.advance(0.15)
    path.write_text(whole)  # the second chunk, 0.15 s later
    assert patient.step({(MODIFIED, str(path))}) == []
    clock.advance(INDEX_QUIET_S - 0.01)
    assert patient.step(set()) == []  # not quiet long enough yet
    clock.advance(0.01)
    outcomes = patient.step(set())  # a quiet tick INDEX_QUIET_S after the last write
    assert actions(outcomes) == ["indexed", "regenerated"]
    (edit,) = [e for e in home.events() if e.type == "section.external_edit"]
    assert edit.section == "inventory-service/build"  # one change, the whole save's


def test_a_generated_page_is_indexed_and_rendered_only_after_a_quiet_second(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    batch = changed(home.root, "memory/status.md", lambda t: t.replace("freeze", "freeze!"))
    assert patient.step(batch) == []
    clock.advance(QUIET_S - 0.01)
    assert patient.step(set()) == []  # a render would rewrite what someone just saved
    clock.advance(0.01)
    assert actions(patient.step(set())) == ["indexed", "regenerated"]


def test_a_half_written_append_only_log_records_no_violation(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    path = home.root / "memory/decisions.md"
    whole = path.read_text() + "\n## 2026-12-01 — human\n\nShip on Tuesdays.\n"
    path.write_text(whole[:10])  # truncated, then written: for a moment history is gone
    assert patient.step({(MODIFIED, str(path))}) == []
    clock.advance(0.3)
    path.write_text(whole)
    assert patient.step({(MODIFIED, str(path))}) == []
    clock.advance(QUIET_S)
    assert "violation" not in actions(patient.step(set()))
    assert "policy.violation" not in [e.type for e in home.events()]
    assert home.workspace.store.file_state("memory/decisions.md") is not None


def test_a_generated_page_someone_just_saved_is_not_rendered_over_until_quiet(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    status = home.root / "memory/status.md"
    saved = status.read_text().replace("deploy freeze", "deploy freeze (and Mondays)")
    status.write_text(saved)  # the watch has not reported it yet
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    assert "regenerated" not in actions(patient.step(set()))  # the claim is news, but…
    assert status.read_text() == saved  # …the page was changed by someone else a moment ago
    clock.advance(QUIET_S)
    outcomes = patient.step(set())
    assert actions(outcomes)[-1] == "regenerated"
    assert "(and Mondays)" in status.read_text()
    assert "agent-b" in status.read_text()  # rendered, with the claim, around the human's note


# -- git: paused while it works, its changes are its own -------------------------------------------


def test_nothing_is_indexed_while_git_holds_its_lock_and_then_it_is_gits(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    lock = home.root / ".git/index.lock"
    lock.write_text("")
    batch = changed(home.root, "CLAUDE.md", lambda t: t.replace("make build", "make all"))
    assert patient.step(batch | {(ADDED, str(lock))}) == []
    clock.advance(10 * QUIET_S)
    assert patient.step(set()) == []  # still locked: a long checkout, or a crashed git
    lock.unlink()
    assert patient.step({(DELETED, str(lock))}) == []
    clock.advance(QUIET_S)
    outcomes = patient.step(set())
    assert actions(outcomes) == ["indexed"]  # and git's events re-render no page (no filter)
    (edit,) = [e for e in home.events() if e.type == "section.external_edit"]
    assert edit.actor == "git"


def test_a_snapshot_page_git_checked_out_is_indexed_as_git_wrote_it(
    home: Memory, clock: FakeClock
) -> None:
    policy = home.root / ".memkeeper.yaml"
    rule = "  - path: memory/status.md\n    class: generated\n"
    policy.write_text(policy.read_text().replace(rule, rule + "    git: snapshot\n"))
    patient = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    patient.caught_up(first=True)
    status = home.root / "memory/status.md"
    branch = status.read_text().replace("## Notes", "## Notes\n\nOn the other branch.")
    status.write_text(branch)
    (home.root / ".git/ORIG_HEAD").write_text("0" * 40 + "\n")  # what a checkout touches
    assert patient.step({(MODIFIED, str(status)), (MODIFIED, str(home.root / ".git"))}) == []
    assert patient.step({(MODIFIED, str(home.root / ".git/ORIG_HEAD"))}) == []
    clock.advance(QUIET_S)
    assert actions(patient.step(set())) == ["indexed"]
    assert status.read_text() == branch  # not re-rendered: the tree stays as git left it
    clock.advance(QUIET_S)
    assert patient.step(set()) == []


def test_a_merge_in_progress_pauses_the_daemon_until_it_is_concluded(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    merge_head = home.root / ".git/MERGE_HEAD"
    merge_head.write_text("0" * 40 + "\n")
    conflicted = "<<<<<<< HEAD\n- make\n=======\n- make all\n>>>>>>> other\n"
    batch = changed(home.root, "AGENTS.md", lambda t: t + conflicted)
    assert patient.step(batch) == []
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)  # news for the page…
    clock.advance(5 * QUIET_S)
    assert patient.step(set()) == []  # …that waits: nothing is written while git merges
    changed(home.root, "AGENTS.md", lambda t: t.replace(conflicted, "- make all\n"))
    merge_head.unlink()
    assert patient.step({(DELETED, str(merge_head))}) == []
    clock.advance(QUIET_S)
    outcomes = patient.step(set())
    assert actions(outcomes) == ["indexed", "regenerated"]
    assert "agent-b" in (home.root / "memory/status.md").read_text()


def test_a_hand_edit_undone_closes_its_reconciliation_and_says_so(
    daemon: Daemon, home: Memory
) -> None:
    status = home.root / "memory/status.md"
    rendered = status.read_text()
    daemon.step(changed(home.root, "memory/status.md", lambda t: t.replace("_No live", "_No")))
    status.write_text(rendered)  # the human changes their mind
    outcomes = daemon.step({(MODIFIED, str(status))})
    (closed,) = [o for o in outcomes if o.action == "reconcile"]
    assert closed.detail == "reconciliation #1 resolved (undone)"
    assert home.reconciliations() == []
