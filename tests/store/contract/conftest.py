"""One contract for every store backend: the same domain methods give the same answers on
SQLite (``Store``) and on etcd (``EtcdStore``, a single-member cluster, a fresh prefix per
test). Each file of this directory holds one domain's part (``store.protocol``), run on both
through the ``store`` fixture; then, in an "etcd only" section, what a shared etcd store must
add there. The builders and the race helpers the files share are here."""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import events as ev
from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.records import FileState, PendingWrite, SectionRow
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.retry import StoreRetry
from memkeeper.store.sqlite import Store
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from memkeeper.store.protocol import StateStore

EXE, WHY = binary()
etcd_only = pytest.mark.skipif(EXE is None, reason=WHY)

_prefixes = itertools.count(1)


def etcd_on(cluster: Cluster, prefix: bytes) -> EtcdStore:
    return EtcdStore(cluster.gateway(), prefix)


@pytest.fixture
def prefix() -> bytes:
    return f"/mk/contract{next(_prefixes)}/".encode()


@pytest.fixture(
    params=["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
)
def store(request: pytest.FixtureRequest, tmp_path: Path, prefix: bytes) -> Iterator[StateStore]:
    opened: StateStore
    if request.param == "sqlite":
        opened = Store.open(str(tmp_path))
    else:
        opened = etcd_on(request.getfixturevalue("cluster"), prefix)
    yield opened
    opened.close()


def row(
    key: str,
    ord_: int,
    rev: int = 1,
    body: bytes = b"text\n",
    *,
    present: bool = True,
    base: str | None = None,
) -> SectionRow:
    heading = f"# {key}\n".encode()
    hash_ = ev.digest(heading + body) if present else None
    last = key.rsplit("/", 1)[-1]
    return SectionRow(
        key, ord_, rev, hash_, present, last, key.count("/") + 1, base or key, heading, body, 2
    )


STATE = FileState(3, "sha256:" + "ab" * 32)
ROWS = [
    row("_preamble", 0, body=b""),
    row("project", 1, 2, b"intro\r\n"),
    row("project/build", 2),
    row("project/build-2", 3, 4, b"\xff\xfe not utf-8\n", base="project/build"),
    row("testing", 4),
    row("gone", 2, 7, present=False),
]


def index(store: StateStore, path: str = "CLAUDE.md") -> None:
    with store.writing():
        store.put_sections(path, ROWS)
        store.put_file(path, STATE)


TS = [ev.iso_utc(1_800_000_000 + n) for n in range(10)]
NOW = 1_700_000_000.0


def claim(id: str, token: int, expires_at: float, targets: tuple[str, ...] = ()) -> Claim:
    targets = targets or ("src/api/", "CLAUDE.md#inventory-service/build")
    return Claim(id, token, "agent-a", "write", targets, 0, False, NOW, expires_at, "")


def waiter(id: str, arrival: int, priority: int = 5) -> WaiterRow:
    request = Request(id, "agent-b", "read", ("docs/",), priority, True, 90.0, "review", arrival)
    return WaiterRow(request, 4242, NOW + 30, "waiting", None)


def pending_write(path: str, at: float, new_inode: int) -> PendingWrite:
    return PendingWrite(0, path, None, None, None, None, new_inode, "sha256:x", ".tmp", at)


def retrying(store: EtcdStore, work: Any) -> Any:
    """``work()`` in a ``writing()`` block of ``store``, run again while it conflicts."""
    while True:
        try:
            with store.writing():
                return work()
        except StoreRetry:
            continue


def race(
    cluster: Cluster, prefix: bytes, per_thread: int, work: Callable[[EtcdStore, str, int], object]
) -> None:
    """Two stores on ``prefix``, ``a`` and ``b``, each in a thread of its own, run
    ``work(store, actor, n)`` for each ``n`` below ``per_thread``, each in a ``writing()``
    block retried while it conflicts; nothing may go wrong in either."""
    errors: list[Exception] = []

    def run(actor: str) -> None:
        mine = etcd_on(cluster, prefix)
        try:
            for n in range(per_thread):
                retrying(mine, functools.partial(work, mine, actor, n))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            mine.close()

    threads = [threading.Thread(target=run, args=(actor,)) for actor in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
