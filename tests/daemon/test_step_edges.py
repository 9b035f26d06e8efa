"""The watch daemon at its edges (``daemon.step``, ``daemon.loop``): clocks stepped
back and forward, many things in one tick, races with a render, git in progress, policy
edits while a change waits. Same setup as ``test_step``: a ``Daemon`` on a copy of
sample-repo, a fake clock, batches of ``(change, absolute path)``."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.daemon.plan import INDEX_QUIET_S, QUIET_S
from memkeeper.daemon.step import Daemon
from memkeeper.fs import atomic
from tests.daemon.conftest import (
    ADDED,
    DELETED,
    MODIFIED,
    RESCAN_S,
    actions,
    append_line,
    changed,
    ticks,
)
from tests.etcd_cluster import binary

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock

EXE, WHY = binary()
needs_etcd = pytest.mark.skipif(EXE is None, reason=WHY)
_prefixes = itertools.count(1)


@pytest.fixture
def patient(home: Memory) -> Daemon:
    started = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S)
    started.caught_up(first=True)
    return started


def edits(memory: Memory) -> list[tuple[str | None, str]]:
    return [(e.path, e.actor) for e in memory.events() if e.type == "section.external_edit"]


# -- clocks stepped back and forward -----------------------------------------------------------


def test_a_clock_stepped_back_after_git_worked_does_not_keep_the_daemon_paused(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    lock = home.root / ".git/index.lock"
    lock.write_text("")
    assert patient.step({(ADDED, str(lock))}) == []
    lock.unlink()
    assert patient.step({(DELETED, str(lock))}) == []
    clock.set(clock.now() - 3600)  # NTP steps the wall clock back an hour
    clock.advance(2 * QUIET_S)  # git is long done
    assert (
        patient.step(changed(home.root, "CLAUDE.md", lambda t: t.replace("make build", "mk"))) == []
    )
    done = ticks(patient, clock, 2 * QUIET_S)
    assert "indexed" in actions(done)
    assert edits(home) == [("CLAUDE.md", "external")]  # a human's, long after git


def test_a_clock_stepped_back_while_a_save_waits_for_quiet_delays_it_by_a_quiet_period_only(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    assert patient.step(changed(home.root, "AGENTS.md", append_line)) == []
    clock.set(clock.now() - 3600)
    done = ticks(patient, clock, 2 * INDEX_QUIET_S)
    assert actions(done)[:1] == ["indexed"]


def test_a_wall_clock_stepped_either_way_neither_expires_a_claim_nor_keeps_it(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    """Claims expire by the machine's uptime (issue 22 item 6): a wall clock stepped an hour
    back, then two hours forward, changes nothing; the claim's 60 s passing expires it."""
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    daemon.step(set())
    clock.set(clock.now() - 3600)
    assert "expired" not in actions(daemon.step(set()))
    clock.set(clock.now() + 7200)  # a big step forward: before, it expired the claim
    assert "expired" not in actions(daemon.step(set()))
    clock.advance(59.99)
    assert "expired" not in actions(daemon.step(set()))
    clock.advance(0.01)
    assert actions(daemon.step(set()))[:1] == ["expired"]


def test_a_claim_already_past_its_expiry_at_the_daemons_next_tick_is_expired(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    clock.advance(61)  # the machine slept (or the clock stepped) before the daemon looked
    done = daemon.step(set()) + daemon.step(set())
    assert "expired" in actions(done)
    assert "claim.expired" in [e.type for e in home.events()]


def test_two_claims_past_their_expiry_at_one_tick_are_both_expired(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    Memory(home.root, "agent-c", clock=clock).claim(["docs/"], ttl=90)
    daemon.step(set())
    clock.advance(3600)
    done = daemon.step(set())
    assert actions(done).count("expired") == 2
    assert "_No live claims._" in (home.root / "memory/status.md").read_text()


# -- many things in one tick ------------------------------------------------------------------


def test_many_saves_and_events_in_one_batch_are_each_indexed_once_and_rendered_once(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    batch: set[tuple[int, str]] = set()
    for rel in ("AGENTS.md", "memory/architecture.md", "memory/risks.md"):
        batch |= changed(home.root, rel, append_line)
        batch.add((MODIFIED, str(home.root / rel)))  # a watcher reports a file twice
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    Memory(home.root, "agent-c", clock=clock).emit("task.done", data={"n": 1})
    outcomes = daemon.step(batch | {(MODIFIED, str(home.root / ".memkeeper/state.db-wal"))})
    indexed = sorted(o.path or "" for o in outcomes if o.action == "indexed")
    assert indexed == ["AGENTS.md", "memory/architecture.md", "memory/risks.md"]
    assert actions(outcomes).count("regenerated") == 1
    status = (home.root / "memory/status.md").read_text()
    assert "agent-b" in status
    assert "task.done" in status
    assert daemon.step(set()) == []


# -- files deleted and re-created -------------------------------------------------------------


def test_a_file_deleted_then_recreated_unchanged_needs_nothing_and_is_watched_again(
    daemon: Daemon, home: Memory
) -> None:
    agents = home.root / "AGENTS.md"
    kept = agents.read_text()
    agents.unlink()
    assert actions(daemon.step({(DELETED, str(agents))})) == ["gone"]
    agents.write_text(kept)
    assert daemon.step({(ADDED, str(agents))}) == []
    assert "AGENTS.md" in daemon.known.files
    assert actions(daemon.step(changed(home.root, "AGENTS.md", append_line)))[0] == "indexed"


def test_a_save_waiting_for_quiet_then_deleted_is_gone_and_never_indexed(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    assert patient.step(changed(home.root, "AGENTS.md", append_line)) == []
    (home.root / "AGENTS.md").unlink()
    assert actions(patient.step({(DELETED, str(home.root / "AGENTS.md"))})) == ["gone"]
    assert "AGENTS.md" not in patient.pending
    assert ticks(patient, clock, 2.0) == []
    assert edits(home) == []


def test_a_deleted_generated_page_is_not_an_error_on_the_next_render(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    status = home.root / "memory/status.md"
    status.unlink()
    assert actions(daemon.step({(DELETED, str(status))})) == ["gone"]
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    assert "error" not in actions(daemon.step(set()))


# -- a render racing a human's save -----------------------------------------------------------


def _save_during_render(
    monkeypatch: pytest.MonkeyPatch, status: Path, edit: Callable[[str], str]
) -> list[bool]:
    """A human saves the page between the render's read and its replace (once)."""
    real, saved = atomic.stage, list[bool]()

    def human_first(top: str, rel: str, data: bytes, **kwargs: object) -> atomic.Staged:
        if rel == "memory/status.md" and not saved:
            status.write_text(edit(status.read_text()))
            saved.append(True)
        return real(top, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic, "stage", human_first)
    return saved


def test_a_note_saved_while_the_page_is_rendered_survives_the_render(
    daemon: Daemon, home: Memory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = home.root / "memory/status.md"
    saved = _save_during_render(monkeypatch, status, lambda t: t + "\nMy own note.\n")
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    daemon.step(set())
    monkeypatch.undo()
    assert saved
    done = ticks(daemon, clock, 2 * QUIET_S)
    assert "error" not in actions(done)
    assert "My own note." in status.read_text()


def test_a_region_edited_while_the_page_is_rendered_keeps_the_text_and_is_reconciled(
    daemon: Daemon, home: Memory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = home.root / "memory/status.md"
    saved = _save_during_render(
        monkeypatch,
        status,
        lambda t: t.replace("_No live claims._", "by hand", 1),
    )
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    daemon.step(set())
    monkeypatch.undo()
    assert saved
    ticks(daemon, clock, 2 * QUIET_S)
    daemon.step({(MODIFIED, str(status))})
    assert "by hand" in status.read_text()
    assert [r.region for r in home.reconciliations()] == ["claims"]


def test_an_unreported_region_edit_found_before_a_render_is_reported_as_a_reconciliation(
    daemon: Daemon, home: Memory, clock: FakeClock
) -> None:
    status = home.root / "memory/status.md"
    status.write_text(status.read_text().replace("_No live claims._", "mine"))  # not reported
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    outcomes = daemon.step(set())
    assert [r.region for r in home.reconciliations()] == ["claims"]
    assert "reconcile" in actions(outcomes)


# -- git in progress ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker", ["rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "HEAD.lock"]
)
def test_a_git_operation_in_progress_pauses_indexing_and_rendering(
    patient: Daemon, home: Memory, clock: FakeClock, marker: str
) -> None:
    busy = home.root / ".git" / marker
    if marker.startswith("rebase"):
        busy.mkdir()
    else:
        busy.write_text("0" * 40 + "\n")
    status_before = (home.root / "memory/status.md").read_text()
    batch = changed(home.root, "AGENTS.md", append_line)
    Memory(home.root, "agent-b", clock=clock).claim(["src/"], ttl=60)
    assert patient.step(batch | {(ADDED, str(busy))}) == []
    assert ticks(patient, clock, 5 * QUIET_S, every=0.5) == []
    assert (home.root / "memory/status.md").read_text() == status_before
    shutil.rmtree(busy) if busy.is_dir() else busy.unlink()
    assert patient.step({(DELETED, str(busy))}) == []
    done = ticks(patient, clock, 2 * QUIET_S)
    assert actions(done) == ["indexed", "regenerated"]
    assert edits(home) == [("AGENTS.md", "git")]
    assert "agent-b" in (home.root / "memory/status.md").read_text()


def test_a_save_seen_before_git_started_stays_the_humans(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    assert patient.step(changed(home.root, "AGENTS.md", append_line)) == []
    clock.advance(0.1)
    lock = home.root / ".git/index.lock"
    lock.write_text("")
    assert patient.step({(ADDED, str(lock))}) == []  # git starts, not touching AGENTS.md
    lock.unlink()
    assert patient.step({(DELETED, str(lock))}) == []
    assert "indexed" in actions(ticks(patient, clock, 2 * QUIET_S))
    assert edits(home) == [("AGENTS.md", "external")]


def test_a_generated_page_saved_during_a_merge_is_not_rendered_over_after_it(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    merge_head = home.root / ".git/MERGE_HEAD"
    merge_head.write_text("0" * 40 + "\n")
    status = home.root / "memory/status.md"
    resolved = status.read_text().replace("deploy freeze", "deploy freeze (merged)")
    status.write_text(resolved)
    assert patient.step({(MODIFIED, str(status)), (ADDED, str(merge_head))}) == []
    merge_head.unlink()
    assert patient.step({(DELETED, str(merge_head))}) == []
    ticks(patient, clock, 3 * QUIET_S)
    assert status.read_text() == resolved  # git's page: as git (the merge) left it
    assert edits(home) == [("memory/status.md", "git")]


# -- policy edits while running ----------------------------------------------------------------


def test_a_policy_edit_while_a_save_waits_keeps_it_waiting_and_then_indexes_it(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    assert patient.step(changed(home.root, "AGENTS.md", append_line)) == []
    policy = home.root / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "\n# a comment\n")
    assert actions(patient.step({(MODIFIED, str(policy))})) == ["reloaded"]  # not yet quiet
    assert "indexed" in actions(ticks(patient, clock, 1.0))
    assert edits(home) == [("AGENTS.md", "external")]


def test_a_policy_edit_making_a_waiting_file_private_drops_its_save(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    assert patient.step(changed(home.root, "AGENTS.md", append_line)) == []
    policy = home.root / ".memkeeper.yaml"
    rule = "  - path: AGENTS.md\n    class: private\n"
    policy.write_text(policy.read_text().replace("files:\n", "files:\n" + rule, 1))
    patient.step({(MODIFIED, str(policy))})
    assert ticks(patient, clock, 2.0) == []
    assert edits(home) == []
    assert "AGENTS.md" not in patient.pending


def test_a_policy_edit_making_a_file_generated_while_it_waits_waits_the_full_second(
    patient: Daemon, home: Memory, clock: FakeClock
) -> None:
    notes = home.root / "memory/notes.md"
    notes.write_text(
        "# Notes\n\n<!-- memkeeper:generated source=claims -->\n<!-- memkeeper:end -->\n"
    )
    policy = home.root / ".memkeeper.yaml"
    rule = "  - path: memory/notes.md\n    class: generated\n"
    policy.write_text(policy.read_text().replace("files:\n", "files:\n" + rule, 1))
    outcomes = patient.step({(ADDED, str(notes)), (MODIFIED, str(policy))})
    assert actions(outcomes)[:1] == ["reloaded"]
    assert ticks(patient, clock, 0.5) == []  # a new generated page someone just wrote
    done = ticks(patient, clock, 1.0)
    assert "memory/notes.md" in [o.path for o in done if o.action in ("indexed", "regenerated")]


def test_files_never_indexed_are_indexed_in_batches_at_the_start_not_once_quiet(
    home: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home.root / "memory/scale").mkdir()
    new = [f"memory/scale/f{n:02d}.md" for n in range(40)]
    for rel in new:
        (home.root / rel).write_text(f"# {rel}\n\ntext\n\n## Two\n\nmore\n")
    changed(home.root, "AGENTS.md", append_line)  # indexed before: an edit, once quiet
    store = home.workspace.store
    real, transactions = store.writing, []

    def counted(**kwargs: bool) -> object:
        transactions.append(1)
        return real(**kwargs)

    monkeypatch.setattr(store, "writing", counted)
    outcomes = Daemon(home.workspace, RESCAN_S, quiet_s=QUIET_S).caught_up(first=True)
    indexed = [o.path for o in outcomes if o.action == "indexed"]
    assert indexed == new  # at once, with no quiet period: never seen, nothing to wait for
    assert [o.detail for o in outcomes if o.action == "indexed"] == ["first seen, indexed"] * 40
    assert all(store.file_state(rel) is not None for rel in new)
    assert len(transactions) < 10  # one batch, the verdicts, the sweep, the regen…: not 40
    assert home.read("memory/scale/f07.md#memory-scale-f07-md/two").rev == 1
    assert ("AGENTS.md", "external") not in edits(home)  # waits for quiet, as before
