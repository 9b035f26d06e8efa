"""SQLite's "database is locked" told apart from its other errors, and the ``store_busy`` it
becomes: the holder named when the kernel lists one, "another process" when it does not (a
store held by a real stopped process: tests/e2e/test_store_busy.py; by another connection:
tests/store/sqlite/test_core.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memkeeper.store.sqlite import busy


def sqlite_error(code: int) -> sqlite3.Error:
    error = sqlite3.OperationalError("database is locked")
    error.sqlite_errorcode = code
    return error


@pytest.mark.parametrize(("code", "is_busy"), [(5, True), (517, True), (6, False), (13, False)])
def test_busy_is_sqlite_busy_with_any_extended_code(code: int, is_busy: bool) -> None:
    assert busy.is_busy(sqlite_error(code)) is is_busy
    assert not busy.is_busy(sqlite3.OperationalError("no code"))


def test_a_lock_nobody_is_listed_holding_is_another_processs(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    failure = busy.busy_error(str(db), 10.0)
    assert failure.fields["reason"] == "store_busy"
    assert failure.fields["holder"] is None
    assert failure.message == (
        f"{db}: another process has held the state store's write lock for over 10 s — nothing "
        "was changed; try again once it is done (end it if it hangs)"
    )
