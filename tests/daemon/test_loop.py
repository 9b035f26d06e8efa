"""The watch daemon, driven by a scripted change source and a fake clock: no watcher, no sleeps.

Each scripted step changes files the way a person or another process would and returns the
batch of changes watchfiles would report for it; ``run`` does the rest in this process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.daemon.loop import instance_lock, run
from memkeeper.errors import EnvironmentFailure
from tests.daemon.conftest import (
    ADDED,
    DELETED,
    MODIFIED,
    Never,
    Raw,
    Script,
    Step,
    actions,
    no_sleep,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.clock import FakeClock
    from memkeeper.daemon.plan import Outcome


def watch(memory: Memory, *steps: Step) -> tuple[list[Outcome], Script]:
    script = Script(steps)
    return list(run(memory.workspace, script, Never(), quiet_s=0, pause=no_sleep)), script


def event_types(memory: Memory, since: int = 0) -> list[str]:
    return [e.type for e in memory.events(since=since)]


# -- scripted changes --------------------------------------------------------------------------


def save(root: Path, rel: str, edit: Callable[[str], str]) -> Step:
    """An editor saving in place."""

    def step() -> Raw:
        path = root / rel
        path.write_text(edit(path.read_text()))
        return {(MODIFIED, str(path))}

    return step


def save_by_rename(root: Path, rel: str, edit: Callable[[str], str]) -> Step:
    """An editor writing a temp file and renaming it over the original."""

    def step() -> Raw:
        path = root / rel
        temp = path.with_name(path.name + ".tmp~")
        temp.write_text(edit(path.read_text()))
        os.replace(temp, path)
        return {(ADDED, str(temp)), (DELETED, str(temp)), (ADDED, str(path))}

    return step


def store_changed(root: Path, act: Callable[[], object]) -> Step:
    """Another process records events: the daemon sees the store's WAL change."""

    def step() -> Raw:
        act()
        return {(MODIFIED, str(root / ".memkeeper" / "state.db-wal"))}

    return step


def tick(clock: FakeClock, seconds: float = 0.0) -> Step:
    """A quiet tick of the watcher, ``seconds`` later."""

    def step() -> Raw:
        clock.advance(seconds)
        return set()

    return step


def other(memory: Memory, agent: str, clock: FakeClock) -> Memory:
    return Memory(memory.root, agent, clock=clock)


# -- starting ---------------------------------------------------------------------------------


def test_start_renders_the_regions_and_the_end_says_stopped(home: Memory) -> None:
    outcomes, script = watch(home)
    assert actions(outcomes) == ["started", "regenerated", "stopped"]
    assert outcomes[1].path == "memory/status.md"
    assert "checksum=sha256:" in (home.root / "memory/status.md").read_text()
    root = str(home.root)
    watched = {root, f"{root}/memory", f"{root}/.memkeeper", f"{root}/.git"}  # git's: see test_step
    assert set(script.watched[0]) == watched


def test_start_catches_up_on_a_save_made_while_no_daemon_ran(home: Memory) -> None:
    path = home.root / "AGENTS.md"
    path.write_text(path.read_text() + "\nmore\n")
    outcomes, _ = watch(home)
    indexed = [o for o in outcomes if o.action == "indexed"]
    assert [(o.path, o.section) for o in indexed] == [("AGENTS.md", "agents/handoff-rules")]


# -- human saves ---------------------------------------------------------------------------


def test_a_human_save_is_indexed_as_an_external_edit_with_rev_plus_one(home: Memory) -> None:
    before = home.read("CLAUDE.md#build").rev
    root = home.root
    outcomes, _ = watch(home, save(root, "CLAUDE.md", lambda t: t.replace("make build", "make")))
    (indexed,) = [o for o in outcomes if o.action == "indexed"]
    assert (indexed.path, indexed.section) == ("CLAUDE.md", "inventory-service/build")
    (event,) = [e for e in home.events() if e.type == "section.external_edit"]
    assert event.id == indexed.event
    assert event.data["rev"] == before + 1 == home.read("CLAUDE.md#build").rev


def test_a_save_by_rename_is_indexed_and_the_temp_file_ignored(home: Memory) -> None:
    root = home.root
    outcomes, _ = watch(home, save_by_rename(root, "AGENTS.md", lambda t: t + "\nmore\n"))
    assert [o.path for o in outcomes if o.action == "indexed"] == ["AGENTS.md"]


def test_the_save_shows_up_in_the_events_region_by_itself(home: Memory) -> None:
    root = home.root
    watch(home, save(root, "CLAUDE.md", lambda t: t.replace("make build", "make")))
    status = (root / "memory/status.md").read_text()
    assert "section.external_edit CLAUDE.md#inventory-service/build" in status


def test_memkeepers_own_writes_are_skipped_by_hash(home: Memory, clock: FakeClock) -> None:
    agent = other(home, "agent-a", clock)
    root = home.root

    def patch() -> Raw:
        sec = agent.read("CLAUDE.md#build")
        agent.patch("CLAUDE.md#build", "- make\n\n", expect_rev=sec.rev)
        return {(MODIFIED, str(root / "CLAUDE.md")), (MODIFIED, str(root / "memory/status.md"))}

    outcomes, _ = watch(home, patch)
    assert "indexed" not in actions(outcomes)
    assert "section.external_edit" not in event_types(home)
    assert actions(outcomes)[-2:] == ["regenerated", "stopped"]  # the patch is news for regions


def test_the_daemons_own_regen_does_not_wake_it_again(home: Memory) -> None:
    status = str(home.root / "memory/status.md")
    wal = str(home.root / ".memkeeper/state.db-wal")
    outcomes, _ = watch(home, lambda: {(MODIFIED, status), (MODIFIED, wal)})
    assert actions(outcomes) == ["started", "regenerated", "stopped"]


def test_a_rewrite_of_append_only_history_is_flagged(home: Memory) -> None:
    root = home.root
    edit = save(root, "memory/decisions.md", lambda t: t.replace("Decision", "DECISION", 1))
    outcomes, _ = watch(home, edit)
    (flagged,) = [o for o in outcomes if o.action == "violation"]
    assert flagged.path == "memory/decisions.md"
    assert "history was rewritten" in flagged.detail
    assert "policy.violation" in event_types(home)


def test_an_append_by_hand_to_append_only_history_is_no_violation(home: Memory) -> None:
    root = home.root
    outcomes, _ = watch(home, save(root, "memory/decisions.md", lambda t: t + "\nmore\n"))
    assert "violation" not in actions(outcomes)
    assert "indexed" in actions(outcomes)


def test_a_hand_edit_inside_a_region_opens_one_reconciliation(
    home: Memory, clock: FakeClock
) -> None:
    root = home.root
    agent = other(home, "agent-b", clock)

    def hand_edit(text: str) -> str:
        return text.replace("_No live claims._", "agent-b is away")

    outcomes, _ = watch(
        home,
        save(root, "memory/status.md", hand_edit),
        store_changed(root, lambda: agent.emit("task.completed", {"task": "t1"})),
        store_changed(root, lambda: agent.claim(["src/api/"], ttl=60)),
    )
    assert actions(outcomes).count("reconcile") == 1
    assert event_types(home).count("reconcile.opened") == 1
    assert [r.region for r in home.reconciliations()] == ["claims"]
    status = (root / "memory/status.md").read_text()
    assert "agent-b is away" in status  # the human's text is never overwritten
    assert "task.completed" in status  # the other regions still follow the events


# -- coordination events ----------------------------------------------------------------------


def test_a_new_claim_is_rendered_into_the_status_page(home: Memory, clock: FakeClock) -> None:
    root = home.root
    agent = other(home, "agent-b", clock)
    claim = store_changed(root, lambda: agent.claim(["src/api/"], ttl=60))
    outcomes, _ = watch(home, claim)
    assert actions(outcomes)[-2:] == ["regenerated", "stopped"]
    assert "| agent-b | write | src/api/ |" in (root / "memory/status.md").read_text()


def test_an_emitted_event_is_rendered_into_the_status_page(home: Memory, clock: FakeClock) -> None:
    root = home.root
    agent = other(home, "ci", clock)
    emit = store_changed(root, lambda: agent.emit("risk.found", {"title": "flaky test"}))
    watch(home, emit)
    assert "ci risk.found: flaky test" in (root / "memory/status.md").read_text()


def test_new_events_are_noticed_on_a_quiet_tick_too(home: Memory, clock: FakeClock) -> None:
    agent = other(home, "agent-b", clock)

    def claim_unseen() -> Raw:
        agent.claim(["src/api/"], ttl=60)
        return set()  # the watcher missed the WAL change

    watch(home, claim_unseen)
    assert "agent-b" in (home.root / "memory/status.md").read_text()


def test_a_claim_is_expired_on_time_and_vanishes_from_the_page(
    home: Memory, clock: FakeClock
) -> None:
    root = home.root
    agent = other(home, "agent-b", clock)
    claim = store_changed(root, lambda: agent.claim(["src/api/"], ttl=60))
    outcomes, _ = watch(home, claim, tick(clock, 59), tick(clock, 2))
    expired = [o for o in outcomes if o.action == "expired"]
    assert len(expired) == 1
    assert "agent-b on src/api/" in expired[0].detail
    assert actions(outcomes)[-3:] == ["expired", "regenerated", "stopped"]
    assert "claim.expired" in event_types(home)
    assert "_No live claims._" in (root / "memory/status.md").read_text()


def test_a_renewed_claim_is_not_expired_at_its_first_deadline(
    home: Memory, clock: FakeClock
) -> None:
    root = home.root
    agent = other(home, "agent-b", clock)
    claim = agent.claim(["src/api/"], ttl=60)
    renew = store_changed(root, lambda: agent.renew(claim.id, ttl=600))
    outcomes, _ = watch(home, tick(clock, 30), renew, tick(clock, 40))
    assert "expired" not in actions(outcomes)


# -- surviving changes to the tree --------------------------------------------------------------


def test_a_deleted_file_is_reported_and_the_daemon_goes_on(home: Memory) -> None:
    root = home.root

    def delete() -> Raw:
        (root / "memory/risks.md").unlink()
        return {(DELETED, str(root / "memory/risks.md"))}

    outcomes, _ = watch(home, delete, save(root, "AGENTS.md", lambda t: t + "\nmore\n"))
    assert [o.path for o in outcomes if o.action == "gone"] == ["memory/risks.md"]
    assert [o.path for o in outcomes if o.action == "indexed"] == ["AGENTS.md"]


def test_a_file_renamed_away_and_back_is_survived(home: Memory) -> None:
    root = home.root
    claude, aside = root / "CLAUDE.md", root / "CLAUDE.md.bak"

    def move(src: Path, dst: Path) -> Step:
        def step() -> Raw:
            os.replace(src, dst)
            return {(DELETED, str(src)), (ADDED, str(dst))}

        return step

    edit = save(root, "CLAUDE.md", lambda t: t.replace("make build", "make"))
    outcomes, _ = watch(home, move(claude, aside), move(aside, claude), edit)
    assert actions(outcomes).count("gone") == 1
    assert [o.path for o in outcomes if o.action == "indexed"] == ["CLAUDE.md"]


def test_a_deleted_directory_is_no_longer_watched(home: Memory) -> None:
    root = home.root

    def delete_memory() -> Raw:
        for path in sorted((root / "memory").rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        (root / "memory").rmdir()
        return {(DELETED, str(root / "memory"))}

    outcomes, script = watch(home, delete_memory)
    assert {o.path for o in outcomes if o.action == "gone"} >= {"memory/status.md"}
    assert "rewatched" in actions(outcomes)
    assert str(root / "memory") not in script.watched[-1]


def test_a_new_directory_with_a_managed_file_gets_watched(home: Memory) -> None:
    root = home.root

    def new_dir() -> Raw:
        (root / "memory/teams").mkdir()
        (root / "memory/teams/search.md").write_text("# Search\n\nowner: ana\n")
        return {(ADDED, str(root / "memory/teams"))}

    outcomes, script = watch(home, new_dir)
    assert ("memory/teams/search.md", "first seen, indexed") in [
        (o.path, o.detail) for o in outcomes if o.action == "indexed"
    ]
    assert str(root / "memory/teams") in script.watched[-1]


def test_a_policy_edit_is_reloaded_and_newly_managed_directories_watched(home: Memory) -> None:
    root = home.root
    notes = root / "docs/notes.md"

    def manage_docs() -> Raw:
        notes.write_text("# Notes\n\nfirst\n")
        policy = root / ".memkeeper.yaml"
        rule = "  - path: docs/**\n    class: section-owned\n"
        policy.write_text(policy.read_text().replace("files:\n", "files:\n" + rule, 1))
        return {(MODIFIED, str(policy))}

    edit_notes = save(root, "docs/notes.md", lambda t: t + "second\n")
    outcomes, script = watch(home, manage_docs, edit_notes)
    assert "reloaded" in actions(outcomes)
    assert str(root / "docs") in script.watched[-1]
    assert ("docs/notes.md", "notes") in [(o.path, o.section) for o in outcomes if o.event]


def test_a_broken_policy_is_an_error_once_and_the_old_policy_stays(home: Memory) -> None:
    root = home.root
    policy = root / ".memkeeper.yaml"

    def break_policy() -> Raw:
        policy.write_text(policy.read_text().replace("class: generated", "class: genrated"))
        return {(MODIFIED, str(policy))}

    touch = {(MODIFIED, str(policy))}
    outcomes, _ = watch(home, break_policy, lambda: touch)
    errors = [o for o in outcomes if o.action == "error"]
    assert len(errors) == 1
    assert ".memkeeper.yaml" in errors[0].detail
    assert actions(outcomes)[-1] == "stopped"


def test_unmanaged_files_and_temp_files_are_ignored(home: Memory) -> None:
    root = home.root
    paths = ["src/inventory/db.py", "memory/.status.md.memkeeper-99.tmp", "memory/risks.md~"]
    outcomes, _ = watch(home, lambda: {(MODIFIED, str(root / p)) for p in paths})
    assert actions(outcomes) == ["started", "regenerated", "stopped"]


def test_private_files_are_left_alone(home: Memory) -> None:
    root = home.root
    outcomes, _ = watch(home, save(root, "memory/scratch/agent-a.md", lambda t: t + "x\n"))
    assert actions(outcomes) == ["started", "regenerated", "stopped"]
    assert home.workspace.store.file_state("memory/scratch/agent-a.md") is None


def test_a_set_stop_event_ends_the_run_after_the_current_batch(home: Memory) -> None:
    stop = threading.Event()
    root = home.root
    edit = save(root, "AGENTS.md", lambda t: t + "a\n")

    def edit_then_stop() -> Raw:
        stop.set()  # as SIGTERM's handler does
        return edit()

    script = Script([edit_then_stop, edit, edit])
    outcomes = list(run(home.workspace, script, stop, quiet_s=0, pause=no_sleep))
    assert actions(outcomes)[-3:] == ["indexed", "regenerated", "stopped"]
    assert len(script.steps) == 2


class Flaky(Script):
    """A source whose first ``failures`` watches fail to start, as a vanished directory does."""

    def __init__(self, steps: Sequence[Step], failures: int) -> None:
        super().__init__(steps)
        self.failures = failures

    def watch(self, dirs: Sequence[str], stop: object) -> Iterator[Raw]:
        if self.failures > 0:
            self.failures -= 1
            return self._fail()
        return super().watch(dirs, stop)

    def _fail(self) -> Iterator[Raw]:
        raise FileNotFoundError(2, "No such file or directory", "memory")
        yield set()  # pragma: no cover  (a generator, like watchfiles.watch)


def test_a_watch_that_fails_to_start_is_retried(home: Memory) -> None:
    pauses: list[float] = []
    root = home.root
    source = Flaky([save(root, "AGENTS.md", lambda t: t + "a\n")], failures=2)
    outcomes = list(run(home.workspace, source, Never(), quiet_s=0, pause=pauses.append))
    assert actions(outcomes)[:3] == ["error", "error", "started"]
    assert "indexed" in actions(outcomes)
    assert pauses == [0.1, 0.2]


def test_a_watch_that_never_starts_gives_up_with_an_environment_failure(home: Memory) -> None:
    pauses: list[float] = []
    outcomes: list[Outcome] = []
    with pytest.raises(EnvironmentFailure, match="max_user_watches"):
        outcomes.extend(
            run(home.workspace, Flaky([], failures=99), Never(), quiet_s=0, pause=pauses.append)
        )
    assert len(pauses) == 4


def test_each_outcome_is_one_line_for_people(home: Memory) -> None:
    from memkeeper.cli import output as humane

    root = home.root
    outcomes, _ = watch(home, save(root, "CLAUDE.md", lambda t: t.replace("make build", "make")))
    (indexed,) = [o for o in outcomes if o.action == "indexed"]
    line = humane.render("watch", indexed.to_json())
    assert line.endswith(
        f" indexed     CLAUDE.md#inventory-service/build: edited outside memkeeper, now rev 2 "
        f"(event {indexed.event})\n"
    )
    assert line.count("\n") == 1


# -- one daemon per memory home -------------------------------------------------------------


def test_a_second_daemon_on_the_same_home_is_refused_naming_the_pid(tmp_path: Path) -> None:
    refused = pytest.raises(EnvironmentFailure, match=f"pid {os.getpid()}")
    with instance_lock(str(tmp_path)), refused as raised, instance_lock(str(tmp_path)):
        pass  # pragma: no cover
    assert raised.value.exit_code == 1
    with instance_lock(str(tmp_path)):  # released: the next one gets it
        pass
