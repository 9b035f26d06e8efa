"""Writers' turns at the local store's write lock (``writeturn``): a turn held keeps the next
writer waiting — in the kernel, handed over the moment it is let go — for at most its
timeout; a wait given up lets the turn go once it comes; no lock file to be had means no
turns; and a store's write holds its turn from its BEGIN to its commit."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure
from memkeeper.events import iso_utc
from memkeeper.names import LOCKS_DIR, WRITE_TURN
from memkeeper.store.sqlite import Store, core
from memkeeper.store.sqlite.writeturn import WriteTurn


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "locks" / "write.lock")


def test_a_free_turn_is_taken_at_once_and_its_directory_made(path: str) -> None:
    turn = WriteTurn(path)
    start = time.monotonic()
    assert turn.take(5.0) is True
    assert time.monotonic() - start < 0.5
    assert Path(path).is_file()
    turn.give()
    turn.close()


def test_a_held_turn_keeps_another_connection_out_until_its_timeout(path: str) -> None:
    first, second = WriteTurn(path), WriteTurn(path)
    assert first.take(1.0)
    start = time.monotonic()
    assert second.take(0.2) is False
    assert 0.2 <= time.monotonic() - start < 2.0
    first.give()
    assert second.take(1.0) is True
    second.give()
    first.close()
    second.close()


def test_a_waiting_writer_gets_the_turn_as_it_is_let_go(path: str) -> None:
    first, second = WriteTurn(path), WriteTurn(path)
    assert first.take(1.0)
    got: list[float] = []

    def wait() -> None:
        if second.take(10.0):
            got.append(time.monotonic())

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.2)
    assert got == []  # waiting
    let_go = time.monotonic()
    first.give()
    waiter.join(5)
    assert len(got) == 1
    assert got[0] - let_go < 0.1
    assert first.take(0.05) is False  # the waiter holds it now
    second.give()
    first.close()
    second.close()


def test_a_wait_given_up_lets_the_turn_go_when_it_comes(path: str) -> None:
    first, second, third = WriteTurn(path), WriteTurn(path), WriteTurn(path)
    assert first.take(1.0)
    assert second.take(0.1) is False  # its helper still waits in the kernel
    first.give()
    start = time.monotonic()
    assert third.take(5.0) is True  # the late helper did not keep it
    assert time.monotonic() - start < 1.0
    third.give()
    for turn in (first, second, third):
        turn.close()


def test_without_a_lock_file_to_be_had_writers_go_without_turns(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    turn = WriteTurn(str(tmp_path / "a-file" / "locks" / "write.lock"))
    assert turn.take(0.1) is True
    turn.give()
    turn.close()


def test_a_write_holds_its_turn_from_begin_to_commit(tmp_path: Path) -> None:
    home = tmp_path / ".memkeeper"
    store = Store.open(str(home))
    other = WriteTurn(str(home / LOCKS_DIR / WRITE_TURN))
    try:
        with store.writing():
            store.append_event(iso_utc(0), "a", "emit", None, None, {})
            assert other.take(0.05) is False
        assert other.take(0.05) is True
        other.give()
    finally:
        other.close()
        store.close()


def test_a_turn_held_too_long_is_store_busy_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core, "BUSY_TIMEOUT_S", 0.1)
    home = tmp_path / ".memkeeper"
    store = Store.open(str(home))
    other = WriteTurn(str(home / LOCKS_DIR / WRITE_TURN))
    assert other.take(1.0)
    try:
        with pytest.raises(EnvironmentFailure) as raised, store.writing():
            store.append_event(iso_utc(0), "a", "emit", None, None, {})
        assert raised.value.reason == "store_busy"
        assert "the state store's write lock" in str(raised.value)
        assert store.events() == []
    finally:
        other.give()
        other.close()
        store.close()
