"""The daemon's pure planner: batches in, actions out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.daemon.plan import (
    GIT_ACTOR,
    Batch,
    Gone,
    Index,
    Known,
    Look,
    Pending,
    Reload,
    Rescan,
    Sweep,
    describe,
    plan,
    plan_files,
    prep_changes,
    regen_due,
    settle,
    watch_dirs,
)
from memkeeper.records import Event

ROOT = "/repo"
KNOWN = Known(
    dirs=frozenset({"", ".memkeeper", "memory"}),
    files=frozenset({"CLAUDE.md", "memory/status.md"}),
)


def managed(path: str, disk: str | None, indexed: str | None, cls: str = "section-owned") -> Look:
    return Look(path, "file" if disk else "missing", cls, disk, indexed)


# -- prep_changes ---------------------------------------------------------------------------


def test_changes_become_root_relative_paths_whatever_their_kind() -> None:
    raw = {(1, "/repo/CLAUDE.md"), (3, "/repo/memory/a.md"), (2, "/repo/memory/a.md")}
    assert prep_changes(raw, ROOT) == Batch(frozenset({"CLAUDE.md", "memory/a.md"}))


def test_a_change_of_the_policy_or_the_store_is_noted_not_listed() -> None:
    raw = {(2, "/repo/.memkeeper.yaml"), (2, "/repo/.memkeeper/state.db-wal")}
    assert prep_changes(raw, ROOT) == Batch(frozenset(), policy=True, store=True)


def test_git_memkeeper_state_and_temp_files_are_dropped() -> None:
    raw = {
        (2, "/repo/.memkeeper/watch.lock"),
        (2, "/repo/.git/index"),
        (1, "/repo/.CLAUDE.md.memkeeper-4242.tmp"),
        (1, "/repo/memory/.status.md.swp"),
        (1, "/repo/memory/status.md~"),
        (1, "/repo/4913"),
        (1, "/elsewhere/CLAUDE.md"),
        (1, "/repo"),
    }
    assert prep_changes(raw, ROOT) == Batch()


def test_a_change_in_gits_directory_says_git_is_working_wherever_that_directory_is() -> None:
    raw = {(2, "/repo/.git/index.lock"), (2, "/repo/CLAUDE.md")}
    assert prep_changes(raw, ROOT, "/repo/.git") == Batch(frozenset({"CLAUDE.md"}), git=True)
    worktree = {(1, "/main/.git/worktrees/repo/HEAD")}
    assert prep_changes(worktree, ROOT, "/main/.git/worktrees/repo") == Batch(git=True)
    assert prep_changes({(1, "/repo/.gitignore")}, ROOT, "/repo/.git") == Batch(
        frozenset({".gitignore"})
    )


# -- plan -----------------------------------------------------------------------------------


def test_a_file_whose_bytes_differ_from_the_index_is_indexed() -> None:
    looks = [managed("CLAUDE.md", "sha256:new", "sha256:old")]
    assert plan(Batch(frozenset({"CLAUDE.md"})), looks, KNOWN, 0.0) == (
        Index("CLAUDE.md", "section-owned", "sha256:new"),
    )


def test_a_file_the_index_already_holds_needs_nothing() -> None:
    looks = [managed("CLAUDE.md", "sha256:same", "sha256:same")]
    assert plan(Batch(frozenset({"CLAUDE.md"})), looks, KNOWN, 0.0) == ()


def test_a_new_managed_file_is_indexed_and_unmanaged_or_private_ones_are_not() -> None:
    looks = [
        managed("memory/new.md", "sha256:a", None),
        Look("src/app.py", "file"),
        managed("memory/scratch/me.md", "sha256:b", None, cls="private"),
    ]
    assert plan_files(looks, KNOWN.files) == (Index("memory/new.md", "section-owned", "sha256:a"),)


def test_only_a_known_file_that_vanished_is_reported_gone() -> None:
    looks = [managed("CLAUDE.md", None, "sha256:x"), managed("memory/never.md", None, None)]
    assert plan_files(looks, KNOWN.files) == (Gone("CLAUDE.md"),)


def test_a_policy_change_reloads_instead_of_looking_at_files() -> None:
    looks = [managed("CLAUDE.md", "sha256:new", "sha256:old")]
    batch = Batch(frozenset({"CLAUDE.md"}), policy=True)
    assert plan(batch, looks, KNOWN, 0.0) == (Reload(),)


def test_a_new_directory_or_a_vanished_watched_one_rescans() -> None:
    new_dir = [Look("docs", "dir")]
    gone_dir = [Look("memory", "missing")]
    still_there = [Look("memory", "dir")]
    assert plan(Batch(frozenset({"docs"})), new_dir, KNOWN, 0.0) == (Rescan(),)
    assert plan(Batch(frozenset({"memory"})), gone_dir, KNOWN, 0.0) == (Rescan(),)
    assert plan(Batch(frozenset({"memory"})), still_there, KNOWN, 0.0) == ()


def test_the_rescan_timer_and_the_expiry_deadline_act_on_a_quiet_tick() -> None:
    known = Known(KNOWN.dirs, KNOWN.files, next_expiry=100.0, next_rescan=200.0)
    assert plan(Batch(), [], known, 99.9) == ()
    assert plan(Batch(), [], known, 100.0) == (Sweep(),)
    assert plan(Batch(), [], known, 200.0) == (Rescan(), Sweep())


def test_regions_are_rendered_again_for_any_event_but_a_regen_or_gits() -> None:
    assert regen_due([event("claim.granted", {})])
    assert regen_due([event("region.regenerated", {}), event("task.completed", {})])
    assert not regen_due([event("region.regenerated", {})])
    assert not regen_due([])
    assert not regen_due([event("section.external_edit", {"rev": 2}, "CLAUDE.md", GIT_ACTOR)])


# -- settle: quiet before indexing -----------------------------------------------------------


def test_a_change_waits_for_quiet_and_a_further_change_starts_the_wait_again() -> None:
    first = settle(None, "sha256:a", 10.0, quiet_s=1.0, git=False)
    assert first == Pending("sha256:a", 10.0)
    assert settle(first, "sha256:a", 10.9, quiet_s=1.0, git=False) == first
    again = settle(first, "sha256:b", 10.9, quiet_s=1.0, git=False)  # a second chunk landed
    assert again == Pending("sha256:b", 10.9)
    assert settle(again, "sha256:b", 11.8, quiet_s=1.0, git=False) == again
    assert settle(again, "sha256:b", 11.9, quiet_s=1.0, git=False) is None


def test_without_a_quiet_period_a_change_is_indexed_at_once() -> None:
    assert settle(None, "sha256:a", 10.0, quiet_s=0.0, git=False) is None


def test_nothing_is_indexed_while_git_works_and_what_appeared_meanwhile_is_gits() -> None:
    seen = settle(None, "sha256:a", 10.0, quiet_s=0.0, git=True)
    assert seen == Pending("sha256:a", 10.0, by_git=True)
    assert settle(seen, "sha256:a", 99.0, quiet_s=0.0, git=True) == seen
    assert settle(seen, "sha256:a", 99.0, quiet_s=0.0, git=False) is None
    human = settle(None, "sha256:h", 10.0, quiet_s=1.0, git=False)
    assert human == Pending("sha256:h", 10.0, by_git=False)
    assert settle(human, "sha256:h", 12.0, quiet_s=1.0, git=True) == human  # git began later
    changed = settle(human, "sha256:g", 12.0, quiet_s=1.0, git=True)
    assert changed == Pending("sha256:g", 12.0, by_git=True)  # then git wrote the file


@given(st.lists(st.tuples(st.floats(0.0, 3.0), st.sampled_from("abc")), min_size=1, max_size=30))
def test_a_file_is_indexed_only_after_a_full_quiet_period_of_the_same_bytes(
    looks: list[tuple[float, str]],
) -> None:
    now, seen, changed_at, last = 0.0, None, 0.0, None
    for gap, disk in looks:
        now += gap
        if disk != last:
            changed_at, last = now, disk
        wait = settle(seen, disk, now, quiet_s=1.0, git=False)
        if wait is None:
            assert now - changed_at >= 1.0  # a state seen for less than a second never is
            seen, last = None, None
        else:
            seen = wait


# -- watch_dirs -----------------------------------------------------------------------------


def test_the_watched_directories_hold_the_files_and_lead_to_them() -> None:
    dirs = watch_dirs(["CLAUDE.md", "a/b/c/AGENTS.md"])
    assert dirs == frozenset({"", ".memkeeper", "a", "a/b", "a/b/c"})


segment = st.text("abc", min_size=1, max_size=3)


@given(st.lists(st.lists(segment, min_size=1, max_size=4).map("/".join), max_size=8))
def test_every_files_directory_is_watched_and_with_it_every_ancestor(files: list[str]) -> None:
    dirs = watch_dirs(files)
    for path in files:
        assert path.rpartition("/")[0] in dirs
    for directory in dirs - {"", ".memkeeper"}:
        assert directory.rpartition("/")[0] in dirs


# -- describe -------------------------------------------------------------------------------


def event(
    type: str, data: dict[str, object], path: str | None = None, actor: str = "agent-b"
) -> Event:
    return Event(7, "2026-01-01T00:00:00Z", actor, type, path, "build", dict(data), "", "")


def test_events_the_daemon_caused_read_as_one_line_each() -> None:
    edit = describe(event("section.external_edit", {"rev": 3}, "CLAUDE.md"))
    assert (edit.action, edit.path, edit.section, edit.event) == (
        "indexed",
        "CLAUDE.md",
        "build",
        7,
    )
    assert "now rev 3" in edit.detail
    opened = describe(event("reconcile.opened", {"id": 2, "region": "claims", "line": 8}))
    assert opened.action == "reconcile"
    assert "memkeeper reconcile show 2" in opened.detail
    expired = describe(event("claim.expired", {"id": "c4", "targets": ["src/"]}))
    assert (expired.action, expired.detail) == ("expired", "claim c4 of agent-b on src/")
    assert describe(event("region.regenerated", {"regions": ["claims"]})).detail == (
        "rendered claims"
    )
