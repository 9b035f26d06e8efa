"""Group commit (issue 14, item 3): a durable commit returns only after an fdatasync of the
log that started after it; commits of several threads made while one sync runs share the
next."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.records import FileState
from memkeeper.store.sqlite import Store, walsync

if TYPE_CHECKING:
    import pytest


def counting_syncs(monkeypatch: pytest.MonkeyPatch, slow_s: float = 0.0) -> list[int]:
    """Count ``os.fdatasync`` calls (each taking ``slow_s`` longer, as a slow disk would)."""
    calls: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        calls.append(fd)
        time.sleep(slow_s)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    return calls


def test_a_durable_commit_syncs_the_log_and_a_release_like_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(str(tmp_path))
    calls = counting_syncs(monkeypatch)
    with store.writing():
        store.put_file("a.md", FileState(1, "sha256:a"))
    assert len(calls) == 1
    with store.writing(durable=False):
        store.put_file("a.md", FileState(2, "sha256:b"))
    assert len(calls) == 1
    store.close()


def test_writers_in_threads_share_syncs_and_none_returns_before_its_commit_is_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(str(tmp_path)).close()
    calls = counting_syncs(monkeypatch, slow_s=0.02)
    synced_upto: list[int] = []  # the commits a finished sync covers, in order
    sync = walsync.for_log(str(tmp_path / "state.db-wal"))
    committed = [0]
    lock = threading.Lock()
    real_sync = sync._fdatasync

    def tracked() -> None:
        with lock:
            upto = committed[0]
        real_sync()
        synced_upto.append(upto)

    monkeypatch.setattr(sync, "_fdatasync", tracked)
    answered: list[tuple[int, int]] = []  # (my commit's number, syncs finished when I returned)

    def writer(n: int) -> None:
        store = Store.open(str(tmp_path))
        for i in range(5):
            with store.writing():
                store.put_file(f"{n}-{i}.md", FileState(1, "sha256:x"))
                with lock:
                    committed[0] += 1
                    mine = committed[0]
            answered.append((mine, max(synced_upto, default=0)))
        store.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(answered) == 20
    assert all(upto >= mine for mine, upto in answered)  # synced before it answered
    assert len(calls) < 20  # … and the threads shared syncs
