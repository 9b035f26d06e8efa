"""The files memkeeper replaced, kept for an editor that had one open: a save into a replaced
file is recovered (merged, or kept whole in an event), a kept file nobody wrote into goes once
old, a save in progress is left until quiet — and none is lost when its writer died."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.fs import background, processes
from memkeeper.ops import keptlinks

if TYPE_CHECKING:
    from memkeeper import Memory

KEPT = Path(".memkeeper") / "kept"
REF = "CLAUDE.md#build"


def events_of(memory: Memory, type_: str) -> list[dict[str, object]]:
    return [e.data for e in memory.events() if e.type == type_]


@pytest.fixture
def editor_opens_after_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor that opens the file for writing just after memkeeper's last check (the
    window no check closes): its save goes into the file memkeeper then replaces."""
    monkeypatch.setattr(processes, "open_for_writing", lambda fd: False)


def kept_links(root: Path) -> list[Path]:
    """The kept links (and none of the ``.base`` files beside them), once this process's
    background thread has settled the ones it was asked to (``background.submit``)."""
    background.drain()
    found = sorted((root / KEPT).iterdir()) if (root / KEPT).is_dir() else []
    return [p for p in found if p.suffix != ".base"]


def later(memory: Memory, seconds: float = 10.0) -> list[str]:
    """Settle the kept files as if ``seconds`` had passed (and the writer had gone quiet)."""
    for link in kept_links(memory.root):
        stamp = time.time() - seconds
        os.utime(link, (stamp, stamp))
    return memory.workspace.settle_kept(now=time.time() + seconds)


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_late_save_to_another_section_is_merged_into_the_file(
    memory: Memory, sample: Path
) -> None:
    section = memory.read("CLAUDE.md#build")
    with open(sample / "CLAUDE.md", "r+b") as editor:  # the editor opened the file …
        old = editor.read()
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
        editor.seek(0)  # … and saves its version after memkeeper replaced it
        editor.truncate(0)
        editor.write(old.replace(b"## Testing\n", b"## Testing\n- the human's\n"))
    assert b"- the human's" not in (sample / "CLAUDE.md").read_bytes()
    assert later(memory) == ["CLAUDE.md"]
    text = (sample / "CLAUDE.md").read_text()
    assert "- the human's\n" in text
    assert "- ours\n" in text
    (raced,) = events_of(memory, "save.raced")
    assert raced["merged"] is True
    assert kept_links(sample) == []
    memory.verify()


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_save_into_the_file_a_recovery_replaced_is_recovered_in_turn(
    memory: Memory, sample: Path
) -> None:
    section = memory.read("CLAUDE.md#build")
    with open(sample / "CLAUDE.md", "r+b") as first:
        old = first.read()
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
        first.seek(0)
        first.truncate(0)
        first.write(old.replace(b"## Testing\n", b"## Testing\n- the first save\n"))
    with open(sample / "CLAUDE.md", "r+b") as second:  # open while the recovery replaces it
        now = second.read()
        assert later(memory) == ["CLAUDE.md"]
        second.seek(0)
        second.truncate(0)
        second.write(now.replace(b"## Conventions\n", b"## Conventions\n- the second save\n"))
    assert later(memory) == ["CLAUDE.md"]
    text = (sample / "CLAUDE.md").read_text()
    for line in ("- ours\n", "- the first save\n", "- the second save\n"):
        assert line in text
    assert [e["merged"] for e in events_of(memory, "save.raced")] == [True, True]
    memory.verify()


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_late_save_to_the_same_section_is_kept_whole_in_an_event(
    memory: Memory, sample: Path
) -> None:
    section = memory.read("CLAUDE.md#build")
    with open(sample / "CLAUDE.md", "r+b") as editor:
        old = editor.read()
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
        editor.seek(0)
        editor.truncate(0)
        editor.write(old.replace(b"## Build\n", b"## Build\n- the human's\n"))
    later(memory)
    assert "- ours\n" in (sample / "CLAUDE.md").read_text()  # the acknowledged patch stays
    (raced,) = events_of(memory, "save.raced")
    assert raced["merged"] is False
    assert "- the human's\n" in str(raced["text"])
    assert raced["conflicts"]


def test_a_replaced_file_nobody_has_open_is_not_kept(memory: Memory, sample: Path) -> None:
    section = memory.read("CLAUDE.md#build")
    memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
    assert kept_links(sample) == [], "no process can write into it: nothing to keep"
    assert events_of(memory, "save.raced") == []


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_kept_file_nobody_wrote_into_goes_once_it_is_old(memory: Memory, sample: Path) -> None:
    section = memory.read("CLAUDE.md#build")
    with open(sample / "CLAUDE.md", "r+b"):  # open for writing through the replace, unused
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
        assert len(kept_links(sample)) == 1  # decided while the editor has it open
    assert memory.workspace.settle_kept(now=time.time()) == []
    assert len(kept_links(sample)) == 1, "kept while an editor may still write into it"
    assert later(memory) == []
    assert sorted((sample / KEPT).iterdir()) == []
    assert events_of(memory, "save.raced") == []


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_watcher_forgets_the_kept_files_another_process_removed(
    memory: Memory, sample: Path
) -> None:
    from memkeeper import Memory

    watcher = Memory.open(sample, agent="daemon").workspace  # as the daemon's, long-lived
    try:
        section = memory.read(REF)
        with open(sample / "CLAUDE.md", "r+b"):  # kept: an editor has it open
            memory.patch(REF, section.content + "- ours\n", expect_rev=section.rev)
            (link,) = kept_links(sample)
        watcher.settle_kept(now=time.time() + 1.5)  # quiet, unchanged, not old: looked at
        assert list(watcher._kept_seen) == [link.name]
        link.unlink()  # another process's settling removed it
        watcher.settle_kept()
        assert watcher._kept_seen == {}  # its memory does not grow with every replace
    finally:
        watcher.store.close()


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_save_still_in_progress_is_left_until_it_is_quiet(memory: Memory, sample: Path) -> None:
    section = memory.read("CLAUDE.md#build")
    with open(sample / "CLAUDE.md", "r+b") as editor:
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
        editor.truncate(0)
        editor.write(b"# half")
    assert memory.workspace.settle_kept(now=time.time()) == []
    assert len(kept_links(sample)) == 1
    assert events_of(memory, "save.raced") == []


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_the_next_operation_on_the_file_settles_what_was_kept(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read("CLAUDE.md#build")
    now_ns = time.time_ns
    with open(sample / "CLAUDE.md", "r+b") as editor:
        old = editor.read()
        monkeypatch.setattr(time, "time_ns", lambda: now_ns() - 5_000_000_000)  # 5 s ago
        done = memory.patch("CLAUDE.md#build", section.content + "- one\n", expect_rev=section.rev)
        monkeypatch.undo()
        editor.seek(0)
        editor.truncate(0)
        editor.write(old.replace(b"## Testing\n", b"## Testing\n- the human's\n"))
    for link in kept_links(sample):
        os.utime(link, (time.time() - 5, time.time() - 5))
    memory.patch("CLAUDE.md#build", section.content + "- one\n- two\n", expect_rev=done.rev)
    text = (sample / "CLAUDE.md").read_text()
    assert "- the human's\n" in text
    assert "- two\n" in text


def test_a_save_into_a_kept_file_whose_base_was_never_written_is_kept_in_an_event(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer died between its rename and the ``.base`` beside the kept link: the save
    someone made into the replaced file cannot be merged, but its text is not dropped."""
    monkeypatch.setattr(background, "submit", lambda job, *args: None)  # died: never ran
    monkeypatch.setattr(processes, "still_writable", lambda path: True)
    section = memory.read(REF)
    memory.patch(REF, section.content + "- ours\n", expect_rev=section.rev)
    kept = sample / ".memkeeper" / "kept"
    (link,) = [p for p in kept.iterdir() if p.suffix != ".base"]
    link.write_text(link.read_text().replace("## Testing\n", "## Testing\n- late save\n"))
    stamp = os.stat(link).st_mtime - 60
    os.utime(link, (stamp, stamp))

    memory.workspace.settle_kept(now=os.stat(link).st_mtime + keptlinks.ORPHAN_S + 120)

    (raced,) = events_of(memory, "save.raced")
    assert "- late save\n" in str(raced["text"])
    assert raced["merged"] is False
    assert not link.exists()
