"""``ops.stamping``: a whole-repository look reads only the files whose stat stamp moved since
memkeeper last read them — ``verify``, ``status`` and ``check`` on an unchanged repository
read nothing but the policy; a change is always read, and ``full`` reads everything."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper import Failed, Memory
from memkeeper.clock import FakeClock
from memkeeper.fs import files
from memkeeper.ops.check import check
from memkeeper.ops.setup import init
from memkeeper.ops.stamping import Stamping
from memkeeper.ops.verify import problems
from memkeeper.stamps import Stamped, stamp_of
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.stamps import StampTable

FILE = "memory/architecture.md"


@pytest.fixture
def clock() -> FakeClock:
    """A minute ahead of the files' times: every stamp taken is old enough to be trusted."""
    return FakeClock(time.time() + 60)


@pytest.fixture
def memory(sample: Path, clock: FakeClock) -> Iterator[Memory]:
    memory = Memory(sample, "agent-a", clock=clock)
    init(memory.workspace, None)
    yield memory
    memory.workspace.close()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The managed files read (every read of a file's bytes goes through these)."""
    seen: list[str] = []
    real_read_bytes, real_open = files.read_bytes, open

    def read_bytes(root: str | os.PathLike[str], rel: str, *, whole: bool = False) -> bytes:
        seen.append(os.path.basename(rel))
        return real_read_bytes(root, rel, whole=whole)

    def opened(path: str, mode: str = "r", *args: object, **kwargs: object) -> object:
        seen.append(os.path.basename(str(path)))
        return real_open(path, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(files, "read_bytes", read_bytes)
    monkeypatch.setattr("memkeeper.ops.stamping.open", opened, raising=False)
    return seen


def same_size_edit(path: Path) -> None:
    """Change one byte, keeping the size, and put the mtime back: only the ctime moves."""
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size


def sqlite(memory: Memory) -> StampTable:
    store = memory.workspace.store
    assert isinstance(store, Store)
    return store.stamp_table()


def test_a_second_look_reads_no_file_that_did_not_change(memory: Memory, reads: list[str]) -> None:
    assert problems(memory.workspace, full=False) == []
    first = len(reads)
    assert first > 5  # the first verify read every indexed file, and recorded their stamps
    assert problems(memory.workspace, full=False) == []
    assert len(reads) == first
    memory.status()
    assert len(reads) == first


def test_full_reads_every_file_again(memory: Memory, reads: list[str]) -> None:
    problems(memory.workspace, full=False)
    first = len(reads)
    problems(memory.workspace, full=True)
    assert len(reads) == 2 * first


def test_a_same_size_edit_with_its_mtime_put_back_is_read_and_found(
    memory: Memory, sample: Path
) -> None:
    assert problems(memory.workspace, full=False) == []
    same_size_edit(sample / FILE)
    found = [(v.path, v.message) for v in problems(memory.workspace, full=False)]
    assert found == [(FILE, "changed since memkeeper last indexed it")]


def test_a_stamp_that_cannot_see_a_change_is_trusted_and_full_finds_it(
    memory: Memory, sample: Path
) -> None:
    """What the stamp cannot tell apart (here forged: a file changed with its stamp as the
    index recorded it) only ``full`` sees."""
    assert problems(memory.workspace, full=False) == []
    same_size_edit(sample / FILE)
    store = sqlite(memory)
    old = store.stamps()[FILE]
    store.put_stamps([old._replace(stamp=stamp_of(os.lstat(sample / FILE)))])
    assert problems(memory.workspace, full=False) == []
    assert [v.path for v in problems(memory.workspace, full=True)] == [FILE]


def test_a_file_changed_in_the_tick_its_stamp_was_taken_is_read_again(
    memory: Memory, sample: Path, clock: FakeClock
) -> None:
    """Git's racily clean rule: looked at within the margin of its last change, the file's
    stamp is not recorded — so a same-size change in that tick is still read next time."""
    path = sample / FILE
    clock.set(os.stat(path).st_ctime_ns / 1e9 + 1)  # a look one second after the save
    assert problems(memory.workspace, full=False) == []
    assert FILE not in sqlite(memory).stamps()
    same_size_edit(path)
    clock.set(time.time() + 60)
    assert [v.path for v in problems(memory.workspace, full=False)] == [FILE]


def test_a_stamp_is_recorded_only_for_bytes_that_agree_with_the_index(
    memory: Memory, sample: Path
) -> None:
    (sample / FILE).write_bytes((sample / FILE).read_bytes() + b"\nmore\n")
    os.utime(sample / FILE, ns=(1, 1))  # an old mtime (the ctime is now: the clock is ahead)
    problems(memory.workspace, full=False)
    assert FILE not in sqlite(memory).stamps()


def test_status_counts_the_same_sections_from_stamps_as_from_the_files(memory: Memory) -> None:
    full = memory.status(full=True)
    assert memory.status() == full
    assert memory.status()["files"] == full["files"]


def test_status_indexes_a_changed_file_as_before(memory: Memory, sample: Path) -> None:
    memory.status()
    (sample / FILE).write_bytes((sample / FILE).read_bytes() + b"\n## New one\n\ntext\n")
    entry = next(f for f in memory.status()["files"] if f["path"] == FILE)
    assert entry["sections"] == len(memory.sections(FILE))
    assert "## New one" in memory.read(FILE).content


@pytest.mark.peer("git")
def test_a_second_check_reads_only_the_append_only_files(
    memory: Memory, sample: Path, reads: list[str], clock: FakeClock
) -> None:
    first = check(sample, clock=clock)["checked"]
    before = len(reads)
    assert check(sample, clock=clock)["checked"] == first
    again = reads[before:]
    assert again == ["decisions.md", "risks.md"]  # judged against git's HEAD too: always read


@pytest.mark.peer("git")
def test_a_file_with_a_violation_is_never_taken_as_clean(
    memory: Memory, sample: Path, clock: FakeClock
) -> None:
    path = sample / FILE
    path.write_bytes(path.read_bytes() + "zero\u200bwidth\n".encode())
    for _ in range(2):
        with pytest.raises(Failed) as failed:
            check(sample, clock=clock)
        assert [v.rule for v in failed.value.violations] == ["hidden-text"]


@pytest.mark.peer("git")
def test_check_finds_a_same_size_edit_and_full_reads_every_file(
    memory: Memory, sample: Path, reads: list[str], clock: FakeClock
) -> None:
    check(sample, clock=clock)
    path = sample / FILE
    data = path.read_bytes()
    at = data.index(b"\n\n") + 1  # a blank line: a hidden character there keeps the size
    path.write_bytes(data[:at] + "\u200b".encode()[:1] + data[at + 1 :])
    with pytest.raises(Failed) as failed:
        check(sample, clock=clock)
    assert [v.rule for v in failed.value.violations] == ["encoding"]
    path.write_bytes(data)
    before = len(reads)
    checked = check(sample, full=True, clock=clock)["checked"]
    assert len(reads) - before == len(checked)


@pytest.mark.peer("git")
def test_a_policy_change_makes_check_judge_every_file_again(
    memory: Memory, sample: Path, reads: list[str], clock: FakeClock
) -> None:
    check(sample, clock=clock)
    policy = sample / ".memkeeper.yaml"
    policy.write_bytes(policy.read_bytes() + b"\n# a comment\n")
    before = len(reads)
    checked = check(sample, clock=clock)["checked"]
    assert len(reads) - before == len(checked)


@pytest.mark.peer("git")
def test_check_without_a_store_reads_every_file_and_makes_none(
    sample: Path, clock: FakeClock
) -> None:
    check(sample, clock=clock)
    assert not (sample / ".memkeeper").exists()


def test_a_busy_store_costs_the_stamps_not_the_look(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.errors import EnvironmentFailure

    def busy(rows: list[Stamped]) -> None:
        raise EnvironmentFailure("state store: busy")

    monkeypatch.setattr(StampTable, "put_stamps", lambda self, rows: busy(rows))
    seen = Stamping(memory.workspace)
    for rel in seen.hashes:
        seen.holds(rel)
    seen.save()
    assert problems(memory.workspace, full=False) == []


def test_one_pass_of_lstats_finds_the_files_as_the_index_holds_them(
    memory: Memory, sample: Path
) -> None:
    assert problems(memory.workspace, full=False) == []  # every stamp recorded
    (sample / FILE).write_bytes((sample / FILE).read_bytes() + b"\nmore\n")
    seen = Stamping(memory.workspace)
    paths = sorted(seen.hashes)
    same = seen.unchanged_among([*paths, "memory/nope.md", "memory"])
    assert sorted(same) == [rel for rel in paths if rel != FILE]
    assert all(same[rel] == seen.indexed(rel) for rel in same)
    assert Stamping(memory.workspace, full=True).unchanged_among(paths) == {}
