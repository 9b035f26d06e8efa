"""The contract of ``StampStore``, this checkout's files' stat stamps: the same answers from
the SQLite store's ``stamps`` table and from the file a root with a shared store keeps them in
(``fs.stampfile``) — they are this machine's, never the shared store's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.fs.stampfile import StampFile
from memkeeper.stamps import Stamp, Stamped
from memkeeper.store.sqlite import Store

if TYPE_CHECKING:
    from memkeeper.store.protocol import StampStore


@pytest.fixture(params=["sqlite", "file"])
def stamps(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StampStore]:
    if request.param == "file":
        yield StampFile(str(tmp_path))
        return
    store = Store.open(str(tmp_path))
    yield store.stamp_table()
    store.close()


def stamped(path: str, size: int = 10, clean: str | None = None) -> Stamped:
    return Stamped(path, Stamp(size, 1_000, 2_000, 3, 4), f"sha256:{size}", 5_000, clean)


def test_stamps_read_back_and_a_put_replaces_only_the_paths_given(stamps: StampStore) -> None:
    assert stamps.stamps() == {}
    stamps.put_stamps([stamped("a.md"), stamped("b.md", clean="key")])
    stamps.put_stamps([stamped("a.md", 11)])
    assert stamps.stamps() == {"a.md": stamped("a.md", 11), "b.md": stamped("b.md", clean="key")}


def test_a_put_of_nothing_changes_nothing(stamps: StampStore) -> None:
    stamps.put_stamps([])
    assert stamps.stamps() == {}
