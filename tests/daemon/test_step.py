"""The daemon's executor, driven directly: a ``Daemon`` on a copy of sample-repo with a fake
clock, fed one batch of ``(change, absolute path)`` at a time, answering with ``Outcome``s."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.clock import FakeClock
from memkeeper.daemon.plan import Outcome
from memkeeper.daemon.step import Daemon
from memkeeper.ops.setup import init

RESCAN_S = 30.0
ADDED, MODIFIED, DELETED = 1, 2, 3
MANAGED = {
    *("AGENTS.md", "CLAUDE.md", "memory/architecture.md"),
    *("memory/decisions.md", "memory/risks.md", "memory/status.md"),
}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def home(sample: Path, clock: FakeClock) -> Memory:
    """The sample, initialised; the daemon's ``Memory`` on the fake clock."""
    memory = Memory(sample, "watcher", clock=clock)
    init(memory.workspace, None)
    return memory


@pytest.fixture
def daemon(home: Memory) -> Daemon:
    """A daemon that has started (its first catch-up is behind it)."""
    started = Daemon(home.workspace, RESCAN_S)
    started.caught_up(first=True)
    return started


def actions(outcomes: Sequence[Outcome]) -> list[str]:
    return [o.action for o in outcomes]


def changed(root: Path, rel: str, edit: Callable[[str], str]) -> set[tuple[int, str]]:
    """Save ``rel`` as an editor would; the batch a watcher reports for it."""
    path = root / rel
    path.write_text(edit(path.read_text()))
    return {(MODIFIED, str(path))}


def append_line(text: str) -> str:
    return text + "\nmore\n"


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
    assert fresh.watch_paths() == [root, f"{root}/.memkeeper", f"{root}/memory"]
    assert not fresh.must_rewatch()
    (home.root / "memory/teams").mkdir()
    (home.root / "memory/teams/search.md").write_text("# Search\n")
    fresh.step({(ADDED, f"{root}/memory/teams")})
    assert fresh.must_rewatch()
    assert fresh.watch_paths()[-1] == f"{root}/memory/teams"
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
