"""Indexing many files at once (``init``, ``status``): the index each file gets is the one
``refresh`` gives it, one by one; the store is written in batches of one transaction each (and
the policy parsed once); a file that is not text, a file another process holds locked, a
save in progress and an etcd transaction too large for one batch are each dealt with without
failing the rest. On both stores."""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper import Memory
from memkeeper.errors import EnvironmentFailure
from memkeeper.fs import files
from memkeeper.ops import bulkindex
from memkeeper.ops.bulkindex import batches, index_files
from memkeeper.policy import loader

SCALE = "memory/scale"


@pytest.fixture(autouse=True)
def made(memory: Memory) -> None:
    """The store made first, as ``init`` makes it (a root without one is described from the
    disk: ``test_a_root_without_a_store_is_described_from_the_disk``)."""
    assert memory.workspace.store is not None


def write(sample: Path, count: int, sections: int = 3) -> list[str]:
    """``count`` section-owned files of ``sections`` sections each; their paths."""
    (sample / SCALE).mkdir(parents=True, exist_ok=True)
    rels = []
    for number in range(count):
        rel = f"{SCALE}/f{number:03d}.md"
        text = "".join(f"## Note {s}\n\nfile {number}, fact {s}\n\n" for s in range(sections))
        (sample / rel).write_text(text)
        rels.append(rel)
    return rels


def index_of(memory: Memory, rels: list[str]) -> list[object]:
    store = memory.workspace.store
    return [(store.file_state(rel), store.sections(rel, with_absent=True)) for rel in rels]


@pytest.fixture
def transactions(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per store transaction the workspace commits from now on."""
    store = memory.workspace.store
    real = store.writing
    seen: list[int] = []

    def counted(**kwargs: bool) -> object:
        seen.append(1)
        return real(**kwargs)

    monkeypatch.setattr(store, "writing", counted)
    return seen


def test_files_indexed_in_bulk_get_the_index_refresh_gives_them_one_by_one(
    memory: Memory, sample: Path, tmp_path: Path
) -> None:
    rels = write(sample, 7)
    found = index_files(memory.workspace, rels)
    assert found == dict.fromkeys(rels, 3)
    other = Memory.open(sample, agent="agent-b")  # its own index of the same files, one by one
    try:
        bulk = index_of(memory, rels)
        for rel in rels:
            other.workspace.refresh(rel)
        assert index_of(other, rels) == bulk  # (the same store: refresh found nothing to do)
    finally:
        other.close()
    assert [memory.read(f"{rel}#note-1").content for rel in rels[:2]] == [
        "\nfile 0, fact 1\n\n",
        "\nfile 1, fact 1\n\n",
    ]


@pytest.mark.sqlite_only  # (a shared store is always there)
def test_a_root_without_a_store_is_described_from_the_disk(sample: Path) -> None:
    rels = write(sample, 2)
    bare = Memory.open(sample, agent="agent-b")
    try:
        shutil.rmtree(sample / ".memkeeper")  # (the autouse fixture made one)
        assert not bare.workspace.has_store
        assert index_files(bare.workspace, rels) == dict.fromkeys(rels, 3)
        assert not (sample / ".memkeeper").exists()
    finally:
        bare.close()


def test_a_batch_is_one_transaction_and_the_policy_is_parsed_once(
    memory: Memory,
    sample: Path,
    transactions: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rels = write(sample, 10)
    monkeypatch.setattr(bulkindex, "BATCH_FILES", 4)
    monkeypatch.setattr(bulkindex, "SHARED_FILES", 4)
    parses: list[bytes | None] = []
    real_parse = loader.parse_policy

    def counted(data: bytes | None, *args: object) -> object:
        parses.append(data)
        return real_parse(data, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "parse_policy", counted)
    index_files(memory.workspace, rels)
    verdicts = 0 if memory.workspace.shared else 1  # a shared store's cache is a file
    assert len(transactions) == verdicts + 3  # 4 + 4 + 2 files
    assert len(parses) == 1
    transactions.clear()
    assert index_files(memory.workspace, rels) == dict.fromkeys(rels, 3)
    assert transactions == []  # nothing changed: nothing written


def test_a_changed_file_is_an_external_edit_as_refresh_records_it(
    memory: Memory, sample: Path
) -> None:
    rels = write(sample, 3)
    index_files(memory.workspace, rels)
    text = (sample / rels[1]).read_text().replace("file 1, fact 2", "changed")
    (sample / rels[1]).write_text(text + "## New\n\nmore\n")
    assert index_files(memory.workspace, rels) == {rels[0]: 3, rels[1]: 4, rels[2]: 3}
    edits = [(e.type, e.path, e.section) for e in memory.workspace.store.events()]
    assert edits == [
        ("section.external_edit", rels[1], "note-2"),
        ("section.external_edit", rels[1], "new"),
    ]
    assert memory.read(f"{rels[1]}#note-2").rev == 2


def test_a_file_that_is_not_text_is_reported_and_the_rest_of_its_batch_indexed(
    memory: Memory, sample: Path
) -> None:
    rels = write(sample, 3)
    (sample / rels[1]).write_bytes(b"## Bad\n\n\xff\xfe\n")
    found = index_files(memory.workspace, rels)
    assert found[rels[0]] == found[rels[2]] == 3
    assert "invalid UTF-8" in str(found[rels[1]])
    assert memory.workspace.store.file_state(rels[1]) is None


def test_a_file_another_process_holds_locked_is_indexed_once_it_is_free(
    memory: Memory, sample: Path
) -> None:
    rels = write(sample, 3)
    ws = memory.workspace
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:  # another open file description: flock conflicts as across processes
        with ws.locked(rels[1]):
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait(10)
    threading.Timer(0.3, release.set).start()
    started = time.monotonic()
    try:
        found = index_files(ws, rels)
    finally:
        release.set()
        holder.join()
    assert found == dict.fromkeys(rels, 3)
    assert time.monotonic() - started >= 0.25  # the locked one waited for its lock
    assert all(ws.store.file_state(rel) is not None for rel in rels)


def test_a_save_in_progress_goes_to_the_one_file_path(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rels = write(sample, 3)
    real_read = files.read_bytes
    raced: list[str] = []

    def racing(root: object, rel: str, *, whole: bool = False) -> bytes:
        if whole and rel == rels[2] and not raced:  # the batch's read sees a writer once
            raced.append(rel)
            raise files.Raced(rel, None)
        return real_read(root, rel, whole=whole)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "read_bytes", racing)
    assert index_files(memory.workspace, rels) == dict.fromkeys(rels, 3)
    assert raced == [rels[2]]


def test_a_batch_that_fails_midway_is_rolled_back_and_its_files_go_one_by_one(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rels = write(sample, 4)
    ws = memory.workspace
    real = ws.index_file
    failed: list[str] = []

    def raced_once(rel: str, data: bytes, **kwargs: object) -> object:
        if rel == rels[2] and not failed:  # a replace redone meanwhile met a save: Raced
            failed.append(rel)
            raise files.Raced(rel, None)
        return real(rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ws, "index_file", raced_once)
    assert index_files(ws, rels) == dict.fromkeys(rels, 3)
    assert failed == [rels[2]]
    assert all(ws.store.file_state(rel) is not None for rel in rels)


def test_a_batch_too_big_for_one_transaction_is_split_in_two_until_it_fits(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rels = write(sample, 5)
    real = bulkindex._transaction
    sizes: list[int] = []

    def limited(ws: object, batch: list[str]) -> object:
        sizes.append(len(batch))
        if len(batch) > 2:
            raise EnvironmentFailure("too large", reason="store_too_large")
        return real(ws, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(bulkindex, "_transaction", limited)
    assert index_files(memory.workspace, rels) == dict.fromkeys(rels, 3)
    assert sizes == [5, 2, 3, 1, 2]


def test_a_single_file_too_big_for_a_transaction_fails_as_it_would_alone(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rels = write(sample, 2)

    def refused(ws: object, batch: list[str]) -> object:
        raise EnvironmentFailure("too large", reason="store_too_large")

    monkeypatch.setattr(bulkindex, "_transaction", refused)
    with pytest.raises(EnvironmentFailure, match="too large"):
        index_files(memory.workspace, rels)


def test_many_files_on_the_real_stores_limits_are_indexed(memory: Memory, sample: Path) -> None:
    """More files, and more bytes, than one etcd transaction takes (128 operations, 1.5 MiB):
    the batches fit, or are split until they do."""
    rels = write(sample, 150, sections=40)
    big = "x" * 400_000
    (sample / rels[0]).write_text(f"## Big\n\n{big}\n")
    found = index_files(memory.workspace, rels)
    assert found == {rels[0]: 1, **dict.fromkeys(rels[1:], 40)}
    assert memory.read(f"{rels[0]}#big").content == f"\n{big}\n"


@given(
    st.lists(st.integers(min_value=0, max_value=50), max_size=40),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=80),
)
def test_batches_keep_every_name_once_in_order_within_both_bounds(
    lengths: list[int], most: int, size: int
) -> None:
    sized = [(f"f{n}", length) for n, length in enumerate(lengths)]
    runs = list(batches(sized, most, size))
    assert [name for run in runs for name in run] == [name for name, _ in sized]
    bytes_of = dict(sized)
    for run in runs:
        assert 1 <= len(run) <= most
        assert len(run) == 1 or sum(bytes_of[name] for name in run) <= size
    for run, following in itertools.pairwise(runs):  # a run ends only when full
        total = sum(bytes_of[name] for name in run) + bytes_of[following[0]]
        assert len(run) == most or total > size
