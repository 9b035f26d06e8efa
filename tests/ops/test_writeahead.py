"""The store as the write-ahead log of the files (issue 14, item 2): a write commits first and
replaces the file after, without fsyncs of its own; a replace the commit holds but the disk
does not is redone on the next look — and told apart from someone's edit made since, which is
never overwritten. The crash points themselves are killed for real in tests/e2e/test_crash.py;
here the plug is pulled by dropping the replace. A writer that takes no lock and saves between
memkeeper's read and its replace makes the operation start over on its save, never lost."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import Conflict, Memory
from memkeeper.errors import EnvironmentFailure
from memkeeper.fs import atomic
from memkeeper.ops import writeahead

if TYPE_CHECKING:
    from collections.abc import Callable

REF = "CLAUDE.md#build"


def events_of(memory: Memory, type_: str) -> list[dict[str, object]]:
    return [e.data for e in memory.events() if e.type == type_]


def pending(memory: Memory, rel: str = "CLAUDE.md") -> int:
    return memory.workspace.store.pending_count(rel)[0]


def drop_replaces(monkeypatch: pytest.MonkeyPatch, *, temp_too: bool) -> None:
    """A power cut between the commit and the rename: the rename never reaches the disk —
    nor, with ``temp_too``, the unsynced temp file (else it is left, as SIGKILL leaves it)."""

    def dropped(staged: atomic.Staged, base: tuple[str, bytes] | None = None) -> bool:
        if temp_too:
            staged.abandon()
        return False

    monkeypatch.setattr(atomic.Staged, "finish", dropped)


def patch_once(memory: Memory, line: str) -> None:
    section = memory.read(REF)
    memory.patch(REF, section.content + line, expect_rev=section.rev)


def test_a_patch_syncs_once_and_leaves_a_pending_row_for_its_replace(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_once(memory, "- warm\n")  # the store exists and the file is indexed
    syncs: list[int] = []
    real_fsync = os.fsync

    def counted(fd: int) -> None:
        syncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counted)
    patch_once(memory, "- one\n")
    assert syncs == []  # the file's replace syncs nothing: SQLite's commit is the one sync
    assert "- one\n" in (sample / "CLAUDE.md").read_text()
    assert pending(memory) == 2
    memory.verify()


def test_a_replace_the_plug_was_pulled_on_is_redone_on_the_next_open(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_once(memory, "- before\n")
    old = (sample / "CLAUDE.md").read_bytes()
    with monkeypatch.context() as m:
        drop_replaces(m, temp_too=True)
        patch_once(memory, "- committed\n")
    assert (sample / "CLAUDE.md").read_bytes() == old  # the disk never saw it
    memory.close()

    again = Memory.open(sample, agent="agent-b")
    section = again.read(REF)

    assert section.content.endswith("- committed\n")
    assert "- committed\n" in (sample / "CLAUDE.md").read_text()
    (redone,) = events_of(again, "write.redone")
    assert redone["hash"] == section.file_hash
    assert not events_of(again, "section.external_edit")  # the old bytes were no human's edit
    assert pending(again) == 0
    again.verify()
    again.close()


def test_several_lost_replaces_of_one_file_are_redone_from_whichever_state_the_disk_kept(
    memory: Memory, sample: Path
) -> None:
    patch_once(memory, "- before\n")
    before = sample / "before.md"
    os.link(sample / "CLAUDE.md", before)  # the file as the disk will have kept it
    for n in range(3):
        patch_once(memory, f"- lost {n}\n")
    os.replace(before, sample / "CLAUDE.md")  # a power cut lost the three unsynced renames

    text = memory.read(REF).content

    assert text.endswith("- before\n- lost 0\n- lost 1\n- lost 2\n")
    assert (sample / "CLAUDE.md").read_text().count("- lost ") == 3
    assert len(events_of(memory, "write.redone")) == 1
    memory.verify()


def test_an_edit_made_after_a_lost_replace_is_never_overwritten(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_once(memory, "- before\n")
    with monkeypatch.context() as m:
        drop_replaces(m, temp_too=True)
        patch_once(memory, "- committed\n")
    human = (sample / "CLAUDE.md").read_text().replace("## Testing\n", "## Testing\n- human\n")
    (sample / "CLAUDE.md").write_text(human)  # a human saves (in place) before memkeeper looks

    memory.read("CLAUDE.md")

    assert (sample / "CLAUDE.md").read_text() == human  # their bytes stay
    assert not events_of(memory, "write.redone")
    assert events_of(memory, "section.external_edit")
    memory.verify()


def test_a_save_after_a_killed_writer_committed_keeps_its_bytes_and_memkeepers_in_an_event(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_once(memory, "- before\n")
    with monkeypatch.context() as m:  # SIGKILL after the commit: the temp file is left
        drop_replaces(m, temp_too=False)
        patch_once(memory, "- committed\n")
    saved = (sample / "CLAUDE.md").read_text().replace("## Testing\n", "## Testing\n- human\n")
    editor_save = sample / ".CLAUDE.md.swp"  # an editor's save: a new file renamed over it
    editor_save.write_text(saved)
    os.replace(editor_save, sample / "CLAUDE.md")

    memory.read("CLAUDE.md")

    assert (sample / "CLAUDE.md").read_text() == saved
    (raced,) = events_of(memory, "save.raced")
    assert raced["stage"] == "commit"
    assert raced["merged"] is False
    assert "- committed\n" in str(raced["text"])  # what memkeeper had committed is kept
    assert not [p for p in os.listdir(sample) if p.endswith(".tmp")]  # the temp went
    memory.verify()


def save_before_the_rename(
    monkeypatch: pytest.MonkeyPatch, path: Path, edit: Callable[[str], str]
) -> list[int]:
    """A writer that takes no lock saves ``path`` (in place) once, between memkeeper's
    commit and its rename; returns the list its saves are counted in."""
    real = atomic.Staged.finish
    saves: list[int] = []

    def finish(staged: atomic.Staged, base: tuple[str, bytes] | None = None) -> bool:
        if not saves:
            path.write_text(edit(path.read_text()))
            saves.append(1)
        return real(staged, base)

    monkeypatch.setattr(atomic.Staged, "finish", finish)
    return saves


def test_a_save_between_the_commit_and_the_rename_of_another_section_is_merged(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read(REF)
    saves = save_before_the_rename(
        monkeypatch, sample / "CLAUDE.md", lambda t: t.replace("## Testing\n", "## Testing\n- h\n")
    )
    done = memory.patch(REF, section.content + "- ours\n", expect_rev=section.rev)

    assert saves == [1]
    text = (sample / "CLAUDE.md").read_text()
    assert "- ours\n" in text
    assert "## Testing\n- h\n" in text
    assert done.rev == section.rev + 1
    (raced,) = events_of(memory, "save.raced")
    assert raced["stage"] == "commit"
    assert raced["merged"] is True
    assert memory.read(REF).rev == done.rev  # the merge did not touch memkeeper's section
    memory.verify()


def test_a_save_of_the_same_section_before_the_rename_stays_and_the_patch_is_a_conflict(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read(REF)
    save_before_the_rename(
        monkeypatch, sample / "CLAUDE.md", lambda t: t.replace("## Build\n", "## Build\n- h\n")
    )
    with pytest.raises(Conflict) as lost:
        memory.patch(REF, section.content + "- ours\n", expect_rev=section.rev)

    assert "## Build\n- h\n" in (sample / "CLAUDE.md").read_text()
    assert "- ours\n" not in (sample / "CLAUDE.md").read_text()
    assert "- h\n" in lost.value.current.content
    (raced,) = [e for e in events_of(memory, "save.raced") if e["stage"] == "commit"]
    assert raced["merged"] is False
    assert "- ours\n" in str(raced["text"])
    memory.verify()


def test_a_merged_patch_that_races_a_save_before_its_rename_keeps_both(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read(REF)
    patch_once(memory, "- theirs\n")  # the agent's read is now stale: its patch merges
    save_before_the_rename(
        monkeypatch, sample / "CLAUDE.md", lambda t: t.replace("## Testing\n", "## Testing\n- h\n")
    )
    done = memory.patch(REF, section.content + "- mine\n", expect_rev=section.rev, merge=True)

    text = (sample / "CLAUDE.md").read_text()
    assert done.merged
    assert "- theirs\n- mine\n" in text
    assert "## Testing\n- h\n" in text
    memory.verify()


def test_a_file_created_by_someone_else_before_the_rename_is_not_replaced(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = sample / "memory" / "risks.md"  # append-only: an append creates it when missing
    target.unlink()
    real = atomic.Staged.finish

    def someone_creates_it(staged: atomic.Staged, base: tuple[str, bytes] | None = None) -> bool:
        if not target.exists():
            target.write_text("# Risks\n\nTheirs.\n")
        return real(staged, base)

    monkeypatch.setattr(atomic.Staged, "finish", someone_creates_it)
    memory.append("memory/risks.md", "Ours.")

    text = target.read_text()
    assert text.startswith("# Risks\n\nTheirs.\n")  # their file was not replaced …
    assert text.count("Ours.") == 1  # … and the append, started over on it, landed once
    (raced,) = [e for e in events_of(memory, "save.raced") if e["stage"] == "commit"]
    assert "Ours." in str(raced["text"])
    memory.verify()


def test_replaces_are_checkpointed_so_the_chain_of_one_file_stays_short(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writeahead, "CHECKPOINT_WRITES", 4)
    for n in range(10):
        patch_once(memory, f"- {n}\n")
        assert pending(memory) <= 4
    synced: list[int] = []
    real_fsync = os.fsync

    def counted(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counted)

    assert memory.workspace.checkpoint(min_age=-1.0) == ["CLAUDE.md"]

    assert len(synced) == 2  # the file and its directory
    assert pending(memory) == 0
    memory.verify()


def test_a_checkpoint_leaves_a_file_someone_edited_since_to_the_next_look(
    memory: Memory, sample: Path
) -> None:
    patch_once(memory, "- ours\n")
    edited = (sample / "CLAUDE.md").read_text() + "\nA human's line.\n"
    (sample / "CLAUDE.md").write_text(edited)

    assert memory.workspace.checkpoint(min_age=-1.0) == []  # not quiet yet, for all it knows

    assert pending(memory) == 1
    memory.read("CLAUDE.md")  # the next look indexes the edit and settles the rows
    assert (sample / "CLAUDE.md").read_text() == edited
    assert pending(memory) == 0
    assert events_of(memory, "section.external_edit")
    memory.verify()


def test_a_save_racing_the_redo_itself_is_kept_and_the_redo_not_forced(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_once(memory, "- before\n")
    with monkeypatch.context() as m:
        drop_replaces(m, temp_too=True)
        patch_once(memory, "- committed\n")
    real, saved = atomic.stage, list[bool]()

    def editor_saves_during_the_redo(*args: Any, **kwargs: Any) -> atomic.Staged:
        if kwargs.get("sync") and not saved:  # the redo's durable replace is being staged
            path = sample / "CLAUDE.md"
            path.write_text(path.read_text().replace("## Testing\n", "## Testing\n- human\n"))
            saved.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(atomic, "stage", editor_saves_during_the_redo)
    memory.read("CLAUDE.md")

    assert saved == [True]
    text = (sample / "CLAUDE.md").read_text()
    assert "## Testing\n- human\n" in text  # their save stays …
    assert "- committed\n" not in text  # … and is not overwritten by the redo
    assert not events_of(memory, "write.redone")
    memory.verify()


def test_a_save_between_the_read_and_the_replace_is_kept_and_the_patch_lands_on_it(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read("CLAUDE.md#build")
    real = atomic.stage
    saved: list[bool] = []

    def editor_saves_first(root: object, rel: str, data: bytes, **kwargs: object) -> atomic.Staged:
        if rel == "CLAUDE.md" and not saved:
            text = (sample / "CLAUDE.md").read_text()
            (sample / "CLAUDE.md").write_text(text.replace("## Testing\n", "## Testing\n- mine\n"))
            saved.append(True)
        return real(root, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic, "stage", editor_saves_first)
    done = memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
    text = (sample / "CLAUDE.md").read_text()
    assert "- mine\n" in text
    assert "- ours\n" in text
    assert done.rev == section.rev + 1
    assert [e["stage"] for e in events_of(memory, "save.raced")] == ["before"]


def test_a_save_that_raced_the_patchs_own_section_turns_it_into_a_conflict(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper import Conflict

    assert memory.workspace.store is not None  # a root with a store: the read indexes
    section = memory.read("CLAUDE.md#build")
    real = atomic.stage

    def editor_edits_build(root: object, rel: str, data: bytes, **kwargs: object) -> atomic.Staged:
        text = (sample / "CLAUDE.md").read_text()
        if "- the human's\n" not in text:
            (sample / "CLAUDE.md").write_text(
                text.replace("## Build\n", "## Build\n- the human's\n")
            )
        return real(root, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic, "stage", editor_edits_build)
    with pytest.raises(Conflict) as lost:
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
    assert "- the human's\n" in lost.value.current.content
    assert "- the human's\n" in (sample / "CLAUDE.md").read_text()


def test_a_writer_that_never_stops_makes_the_patch_fail_with_nothing_changed(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read("CLAUDE.md#testing")
    real = atomic.stage
    count = iter(range(10_000))

    def editor_always_saves(root: object, rel: str, data: bytes, **kwargs: object) -> atomic.Staged:
        with open(sample / "CLAUDE.md", "a") as handle:
            handle.write(f"\n<!-- save {next(count)} -->\n")
        return real(root, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic, "stage", editor_always_saves)
    monkeypatch.setattr(writeahead, "RACE_ATTEMPTS", 3)
    monkeypatch.setattr(time, "sleep", lambda _: None)
    before = (sample / "CLAUDE.md").read_text().split("<!-- save")[0]
    with pytest.raises(EnvironmentFailure, match="kept rewriting it"):
        memory.patch("CLAUDE.md#testing", "- x\n", expect_rev=section.rev)
    assert (sample / "CLAUDE.md").read_text().startswith(before)
    assert "- x\n" not in (sample / "CLAUDE.md").read_text()


def test_a_save_in_progress_makes_the_patch_wait_and_land_after_it(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from memkeeper.fs import files

    testing = memory.read("CLAUDE.md#testing")
    data = (sample / "CLAUDE.md").read_bytes().replace(b"## Build\n", b"## Build\n- mine\n")
    editor = open(sample / "CLAUDE.md", "r+b")  # noqa: SIM115 (closed by the thread)
    editor.truncate(0)
    editor.write(data[:40])  # the first chunk; the rest follows once the patch has looked
    editor.flush()
    # The rest of the save waits for the patch's first look at the file, however long the
    # patch takes to get there (parsing the policy under load took longer than a fixed pause,
    # and the patch then never saw the save half written).
    looked = threading.Event()
    real_read = files.read_bytes

    def read_bytes(root: str, rel: str, *, whole: bool = False) -> bytes:
        if whole:
            looked.set()
        return real_read(root, rel, whole=whole)

    monkeypatch.setattr(files, "read_bytes", read_bytes)

    def finish() -> None:
        looked.wait(30)
        time.sleep(0.05)
        editor.write(data[40:])
        editor.close()

    writer = threading.Thread(target=finish)
    writer.start()
    memory.patch("CLAUDE.md#testing", b"- ours\n", expect_rev=testing.rev)
    writer.join()
    text = (sample / "CLAUDE.md").read_text()
    assert "- mine\n" in text, "the save is whole in the file"
    assert "- ours\n" in text, "the patch landed on top of it"
    assert any(e["stage"] == "before" for e in events_of(memory, "save.raced"))
