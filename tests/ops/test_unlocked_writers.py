"""Writers that take no lock, deterministically: a save between memkeeper's read and its replace,
and a save into the file memkeeper replaced (an editor that had it open). Neither is lost."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.fs import files
from memkeeper.ops import workspace as workspace_module

if TYPE_CHECKING:
    from memkeeper import Memory

KEPT = Path(".memkeeper") / "kept"


@pytest.fixture
def editor_opens_after_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor that opens the file for writing just after memkeeper's last check (the
    window no check closes): its save goes into the file memkeeper then replaces."""
    monkeypatch.setattr(files, "open_for_writing", lambda fd: False)


def kept_links(root: Path) -> list[Path]:
    """The kept links (and none of the ``.base`` files beside them), once this process's
    background thread has settled the ones it was asked to (``files.background``)."""
    files.drain()
    found = sorted((root / KEPT).iterdir()) if (root / KEPT).is_dir() else []
    return [p for p in found if p.suffix != ".base"]


def events_of(memory: Memory, type_: str) -> list[dict[str, object]]:
    return [e.data for e in memory.events() if e.type == type_]


def later(memory: Memory, seconds: float = 10.0) -> list[str]:
    """Settle the kept files as if ``seconds`` had passed (and the writer had gone quiet)."""
    for link in kept_links(memory.root):
        stamp = time.time() - seconds
        os.utime(link, (stamp, stamp))
    return memory.workspace.settle_kept(now=time.time() + seconds)


def test_a_guarded_replace_refuses_a_file_that_changed_since_it_was_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"theirs\n")
    keep = str(tmp_path / "keep")
    with pytest.raises(files.Raced) as raced:
        files.atomic_write(tmp_path, "a.md", b"ours\n", expected=b"read\n", keep=keep)
    assert raced.value.current == b"theirs\n"
    assert (tmp_path / "a.md").read_bytes() == b"theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"], "no temp file, no link left"


@pytest.mark.usefixtures("editor_opens_after_the_check")
def test_a_guarded_replace_keeps_the_replaced_inode(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"old\n")
    keep = tmp_path / "keep"
    with open(tmp_path / "a.md", "r+b") as editor:  # opened before the replace
        assert files.atomic_write(tmp_path, "a.md", b"new\n", expected=b"old\n", keep=str(keep))
        editor.truncate(0)
        editor.write(b"saved late\n")
    assert (tmp_path / "a.md").read_bytes() == b"new\n"
    assert keep.read_bytes() == b"saved late\n", "the late save is in the kept file"


def test_a_whole_save_in_the_window_of_the_rename_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fast editor opens, writes and closes the file between memkeeper's last check and the
    rename: nobody has the replaced file open any more, but it holds the save."""
    (tmp_path / "a.md").write_bytes(b"old\n")
    keep = tmp_path / "keep"
    real = os.replace

    def save_then_rename(*args: object, **kwargs: object) -> None:
        with open(tmp_path / "a.md", "r+b") as editor:  # the file by its name: still the old
            editor.truncate(0)
            editor.write(b"saved in the window\n")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", save_then_rename)
    assert files.atomic_write(tmp_path, "a.md", b"new\n", expected=b"old\n", keep=str(keep))
    assert (tmp_path / "a.md").read_bytes() == b"new\n"
    assert keep.read_bytes() == b"saved in the window\n"


def test_a_save_between_the_read_and_the_replace_is_kept_and_the_patch_lands_on_it(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read("CLAUDE.md#build")
    real = files.stage
    saved: list[bool] = []

    def editor_saves_first(root: object, rel: str, data: bytes, **kwargs: object) -> files.Staged:
        if rel == "CLAUDE.md" and not saved:
            text = (sample / "CLAUDE.md").read_text()
            (sample / "CLAUDE.md").write_text(text.replace("## Testing\n", "## Testing\n- mine\n"))
            saved.append(True)
        return real(root, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "stage", editor_saves_first)
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
    real = files.stage

    def editor_edits_build(root: object, rel: str, data: bytes, **kwargs: object) -> files.Staged:
        text = (sample / "CLAUDE.md").read_text()
        if "- the human's\n" not in text:
            (sample / "CLAUDE.md").write_text(
                text.replace("## Build\n", "## Build\n- the human's\n")
            )
        return real(root, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "stage", editor_edits_build)
    with pytest.raises(Conflict) as lost:
        memory.patch("CLAUDE.md#build", section.content + "- ours\n", expect_rev=section.rev)
    assert "- the human's\n" in lost.value.current.content
    assert "- the human's\n" in (sample / "CLAUDE.md").read_text()


def test_a_writer_that_never_stops_makes_the_patch_fail_with_nothing_changed(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = memory.read("CLAUDE.md#testing")
    real = files.stage
    count = iter(range(10_000))

    def editor_always_saves(root: object, rel: str, data: bytes, **kwargs: object) -> files.Staged:
        with open(sample / "CLAUDE.md", "a") as handle:
            handle.write(f"\n<!-- save {next(count)} -->\n")
        return real(root, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "stage", editor_always_saves)
    monkeypatch.setattr(workspace_module, "RACE_ATTEMPTS", 3)
    monkeypatch.setattr(time, "sleep", lambda _: None)
    before = (sample / "CLAUDE.md").read_text().split("<!-- save")[0]
    with pytest.raises(EnvironmentFailure, match="kept rewriting it"):
        memory.patch("CLAUDE.md#testing", "- x\n", expect_rev=section.rev)
    assert (sample / "CLAUDE.md").read_text().startswith(before)
    assert "- x\n" not in (sample / "CLAUDE.md").read_text()


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


def test_a_save_in_progress_makes_the_patch_wait_and_land_after_it(
    memory: Memory, sample: Path
) -> None:
    import threading

    testing = memory.read("CLAUDE.md#testing")
    data = (sample / "CLAUDE.md").read_bytes().replace(b"## Build\n", b"## Build\n- mine\n")
    editor = open(sample / "CLAUDE.md", "r+b")  # noqa: SIM115 (closed by the thread)
    editor.truncate(0)
    editor.write(data[:40])  # the first chunk; the rest follows after a pause
    editor.flush()

    def finish() -> None:
        time.sleep(0.15)
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
