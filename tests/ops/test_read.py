"""``sections`` and ``read``: line ranges, whole files and sections, answered from the index
while the file is unchanged and re-indexed first when it changed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import Invalid, Memory
from memkeeper.markdown import sections as sections_module
from memkeeper.ops import read as reading
from memkeeper.policy import loader
from memkeeper.records import FileState, SectionRow

if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace


@pytest.fixture
def ws(memory: Memory) -> Workspace:
    """The memory's workspace with its store made: reads index only where a store exists."""
    assert memory.workspace.store is not None
    return memory.workspace


def test_read_returns_heading_body_and_revisions(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    assert sec.key == "inventory-service/build"
    assert sec.heading == "## Build\n"
    assert sec.content.startswith("\n- Python 3.11")
    assert (sec.rev, sec.file_rev) == (1, 1)
    assert sec.hash.startswith("sha256:")
    assert len(sec.hash) == 71


def test_read_without_key_returns_the_whole_file(memory: Memory, sample: Path) -> None:
    whole = memory.read("CLAUDE.md")
    assert whole.content == (sample / "CLAUDE.md").read_text()
    assert whole.key is None
    assert whole.rev == whole.file_rev == 1


def test_sections_cover_the_file_line_by_line_in_order(ws: Workspace, sample: Path) -> None:
    lines = (sample / "CLAUDE.md").read_text().splitlines()
    found = reading.sections(ws, "CLAUDE.md")
    assert [(s.key, s.start_line, s.end_line) for s in found] == [
        ("inventory-service", 1, 5),
        ("inventory-service/build", 6, 10),
        ("inventory-service/testing", 11, 15),
        ("inventory-service/conventions", 16, 25),
        ("inventory-service/release-process", 26, 28),
    ]
    assert found[-1].end_line == len(lines)
    for section in found:
        assert lines[section.start_line - 1].lstrip("# ") == section.title


def test_sections_carry_title_level_rev_and_hash(ws: Workspace) -> None:
    build = reading.sections(ws, "CLAUDE.md")[1]
    assert (build.title, build.level, build.rev) == ("Build", 2, 1)
    assert build.hash == ws.section_row("CLAUDE.md", "build").hash


def test_a_section_read_and_a_whole_read_agree_on_the_file_revision(ws: Workspace) -> None:
    section = reading.read(ws, "CLAUDE.md#testing")
    whole = reading.read(ws, "CLAUDE.md")
    assert (section.file_rev, section.file_hash) == (whole.file_rev, whole.file_hash)
    assert (whole.rev, whole.hash) == (whole.file_rev, whole.file_hash)
    assert whole.heading == ""
    assert section.heading + section.content in whole.content


def test_a_whole_read_keeps_the_files_bytes(ws: Workspace, sample: Path) -> None:
    (sample / "AGENTS.md").write_bytes(b"# A\r\n\r\nbody\r\nno final newline")
    assert reading.read(ws, "AGENTS.md").content == "# A\r\n\r\nbody\r\nno final newline"


def test_an_unchanged_file_is_answered_from_the_index_without_parsing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    reading.read(ws, "CLAUDE.md#build")  # indexes the file
    monkeypatch.setattr(sections_module, "split", _refuse)
    monkeypatch.setattr(loader, "parse_policy", _refuse)
    assert reading.read(ws, "CLAUDE.md#build").key == "inventory-service/build"
    assert reading.read(ws, "CLAUDE.md").file_rev == 1
    assert len(reading.sections(ws, "CLAUDE.md")) == 5


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("parsed an unchanged, indexed file")


def test_a_file_changed_on_disk_is_indexed_before_the_answer(ws: Workspace, sample: Path) -> None:
    assert reading.read(ws, "CLAUDE.md#build").rev == 1
    path = sample / "CLAUDE.md"
    path.write_text(path.read_text().replace("make build", "make wheel"))
    fresh = reading.read(ws, "CLAUDE.md#build")
    assert "make wheel" in fresh.content
    assert (fresh.rev, fresh.file_rev) == (2, 2)
    assert reading.read(ws, "CLAUDE.md#testing").rev == 1
    (event,) = ws.store.events()
    assert (event.type, event.section) == ("section.external_edit", "inventory-service/build")


def test_sections_see_a_heading_added_on_disk(ws: Workspace, sample: Path) -> None:
    reading.sections(ws, "CLAUDE.md")
    path = sample / "CLAUDE.md"
    path.write_text(path.read_text() + "\n## Deployment\n\nFridays never.\n")
    found = reading.sections(ws, "CLAUDE.md")
    assert found[-1].key == "inventory-service/deployment"
    assert found[-1].end_line == len(path.read_text().splitlines())


def test_a_file_that_never_settles_is_answered_from_what_the_index_holds(
    ws: Workspace, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reading.read(ws, "CLAUDE.md")
    path = sample / "CLAUDE.md"
    path.write_text(path.read_text().replace("make build", "make wheel"))
    refreshes: list[str] = []
    monkeypatch.setattr(ws, "refresh", refreshes.append)  # a writer that always wins the race
    answer = reading.read(ws, "CLAUDE.md#build")
    assert len(refreshes) == reading._READ_ATTEMPTS
    assert (answer.rev, answer.file_rev) == (1, 1)
    assert "make build" in answer.content


def test_reading_a_missing_file_or_section_is_invalid(ws: Workspace) -> None:
    with pytest.raises(Invalid, match="no such file"):
        reading.read(ws, "memory/missing.md")
    with pytest.raises(Invalid) as caught:
        reading.read(ws, "CLAUDE.md#deployment")
    assert "inventory-service/build" in caught.value.candidates


def test_a_reference_with_an_empty_key_is_invalid(ws: Workspace) -> None:
    with pytest.raises(Invalid, match="no section key after '#'"):
        reading.read(ws, "CLAUDE.md#")


def test_section_text_decodes_the_indexed_row_with_the_file_state() -> None:
    row = SectionRow("a/b", 1, 4, "sha256:x", True, "B", 2, "b", b"## B\n", "é\n".encode(), 2)
    text = reading.section_text("f.md", FileState(9, "sha256:f"), row)
    assert text.to_json() == {
        "path": "f.md",
        "key": "a/b",
        "heading": "## B\n",
        "content": "é\n",
        "rev": 4,
        "hash": "sha256:x",
        "file_rev": 9,
        "file_hash": "sha256:f",
    }


SCRATCH = "memory/scratch/agent-a.md"


def test_a_private_file_is_read_from_disk_and_never_copied_into_the_store(
    ws: Workspace, sample: Path
) -> None:
    whole = reading.read(ws, SCRATCH)
    assert whole.content == (sample / SCRATCH).read_text()
    assert (whole.rev, whole.file_rev) == (1, 1)
    section = reading.read(ws, f"{SCRATCH}#agent-a-scratchpad")
    assert (section.heading, section.rev) == ("# agent-a scratchpad\n", 1)
    assert section.hash == reading.sections(ws, SCRATCH)[0].hash
    (sample / SCRATCH).write_text("# changed\n\nplans\n")
    assert [s.key for s in reading.sections(ws, SCRATCH)] == ["changed"]
    assert reading.read(ws, f"{SCRATCH}#changed").content == "\nplans\n"
    assert ws.store.file_state(SCRATCH) is None
    assert ws.store.sections(SCRATCH, with_absent=True) == []
    assert ws.store.events() == []


def test_a_missing_section_of_a_private_file_is_invalid_with_candidates(ws: Workspace) -> None:
    with pytest.raises(Invalid) as caught:
        reading.read(ws, f"{SCRATCH}#nope")
    assert list(caught.value.candidates) == ["agent-a-scratchpad"]


@pytest.mark.sqlite_only  # SQLite's own syncs and statements, or a root without a store
def test_without_a_store_read_and_sections_answer_as_a_first_index_would(
    memory: Memory, sample: Path
) -> None:
    ws = memory.workspace
    section = reading.read(ws, "CLAUDE.md#build")
    whole = reading.read(ws, "CLAUDE.md")
    found = reading.sections(ws, "CLAUDE.md")
    assert not (sample / ".memkeeper").exists()
    assert (section.rev, section.file_rev, whole.rev) == (1, 1, 1)
    assert section.file_hash == whole.file_hash
    _ = ws.store  # now there is one: the same answers, from the index
    assert reading.read(ws, "CLAUDE.md#build") == section
    assert reading.read(ws, "CLAUDE.md") == whole
    assert reading.sections(ws, "CLAUDE.md") == found


def test_a_never_indexed_file_held_open_for_writing_is_a_clear_error_soon(
    memory: Memory, sample: Path
) -> None:
    import time

    from memkeeper.errors import EnvironmentFailure

    _ = memory.workspace.store  # a store exists (without one nothing is indexed at all)
    new = sample / "memory" / "new.md"
    with new.open("w") as editor:  # an editor's save in progress
        editor.write("# New\n\nbeing saved\n")
        editor.flush()
        started = time.monotonic()
        with pytest.raises(EnvironmentFailure) as caught:
            memory.read("memory/new.md")
        assert time.monotonic() - started < 2.0
    assert caught.value.fields["reason"] == "being_written"
    assert "open for writing (a save in progress)" in caught.value.message
    assert memory.read("memory/new.md").content.endswith("being saved\n")


def test_a_read_of_an_indexed_file_under_an_invalid_policy_says_so(
    memory: Memory, sample: Path
) -> None:
    from memkeeper.errors import PolicyInvalid

    _ = memory.workspace.store
    memory.read("CLAUDE.md#build")  # indexed: later reads answer from the index
    (sample / ".memkeeper.yaml").write_text("version: 1\nfiles: [{path: x, class: nonsense}]\n")
    with pytest.raises(PolicyInvalid, match="unknown class 'nonsense'"):
        memory.read("CLAUDE.md#build")


def test_a_read_is_written_down_again_after_a_lost_race_and_never_fails_for_it(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.errors import EnvironmentFailure
    from memkeeper.store.retry import StoreRetry

    store, record = ws.store, ws.store.record_reads
    outcomes: list[BaseException] = [StoreRetry("another writer got in first")]

    def flaky(reader: str, path: str, revs: Any) -> None:
        if outcomes:
            raise outcomes.pop()
        record(reader, path, revs)

    monkeypatch.setattr(store, "record_reads", flaky)
    assert reading.read(ws, "CLAUDE.md#build").rev == 1
    assert store.reads_of(ws.agent, "CLAUDE.md") == {"inventory-service/build": 1}
    outcomes.append(EnvironmentFailure("the store is gone"))
    assert reading.read(ws, "CLAUDE.md#testing").rev == 1  # the row lost, not the read
    assert "inventory-service/testing" not in store.reads_of(ws.agent, "CLAUDE.md")
