"""The etcd store's own tests run against a real single-member etcd, each on a fresh prefix:
a store whose gateway records every request it sends (``sent``), another machine's store on
the same prefix, gateways that let another writer in before a commit, and helpers that read
what etcd holds under the prefix."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from memkeeper import events as ev
from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.records import FileState, PendingWrite, SectionRow
from memkeeper.store.etcd import EtcdStore
from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.gateway import Access, Compare, Gateway, TxnResult
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
etcd_only = pytest.mark.skipif(EXE is None, reason=WHY)

NOW = 1_700_000_000.0
TS = [ev.iso_utc(1_800_000_000 + n) for n in range(5)]
STATE = FileState(3, "sha256:" + "ab" * 32)


class Recording(Gateway):
    """A real gateway that also remembers every request it sends: its path and its body."""

    def __init__(self, endpoints: Sequence[tuple[str, int]], access: Access | None = None) -> None:
        super().__init__(endpoints, access=access)
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((path, body))
        return super().call(path, body)


class Interrupted(Gateway):
    """A real gateway before whose next ``times`` commits (transactions that write) another
    writer does ``meanwhile``: each of those commits then finds what it read changed."""

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        meanwhile: Callable[[], object],
        access: Access | None = None,
    ) -> None:
        super().__init__(endpoints, access=access)
        self.meanwhile = meanwhile
        self.times = 0

    def txn(
        self,
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        writes = any("request_range" not in op for op in success)
        if writes and self.times > 0:
            self.times -= 1
            self.meanwhile()
        return super().txn(compare, success, failure)


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> bytes:
    return f"/mk/etcdstore/{request.node.name}/".encode()


@pytest.fixture
def store(cluster: Cluster, prefix: bytes) -> Iterator[EtcdStore]:
    """A store on an empty prefix (but for its format key: the store's first request put it)
    whose gateway records what it sends from then on (``sent``)."""
    gateway = Recording(cluster.endpoints, cluster.access)
    gateway.delete(prefix, etcdgw.prefix_end(prefix))
    opened = EtcdStore(gateway, prefix)
    opened.check_format()
    gateway.sent.clear()
    yield opened
    opened.close()


@pytest.fixture
def other(cluster: Cluster, prefix: bytes, store: EtcdStore) -> Iterator[EtcdStore]:
    """Another machine's store on the same prefix."""
    opened = EtcdStore(cluster.gateway(), prefix)
    yield opened
    opened.close()


def sent(store: EtcdStore) -> list[tuple[str, dict[str, Any]]]:
    assert isinstance(store.gateway, Recording)
    return store.gateway.sent


def stored(store: EtcdStore) -> dict[bytes, bytes]:
    """Every key under the store's prefix (the prefix cut off) and its value, as etcd has it."""
    _, found = store.gateway.range(store.prefix, etcdgw.prefix_end(store.prefix))
    return {kv.key[len(store.prefix) :]: kv.value for kv in found}


def under(store: EtcdStore, table: bytes) -> dict[bytes, bytes]:
    return {k: v for k, v in stored(store).items() if k.startswith(table)}


def key(*parts: str) -> bytes:
    """A key below the prefix: ``table/`` and its parts joined by NUL, as the layout says."""
    return "\0".join(parts).encode()


def n20(number: int) -> str:
    return f"{number:020d}"


def row(
    name: str, ord_: int, rev: int = 1, body: bytes = b"text\n", *, present: bool = True
) -> SectionRow:
    heading = f"# {name}\n".encode()
    hash_ = ev.digest(heading + body) if present else None
    return SectionRow(name, ord_, rev, hash_, present, name.title(), 1, name, heading, body, 2)


def claim(id: str, token: int, expires_at: float) -> Claim:
    return Claim(id, token, "agent-a", "write", ("CLAUDE.md#build",), 0, False, NOW, expires_at, "")


def waiter(id: str, arrival: int, priority: int = 5) -> WaiterRow:
    request = Request(id, "agent-b", "read", ("docs/",), priority, True, 90.0, "review", arrival)
    return WaiterRow(request, 4242, NOW + 30, "waiting", None)


def pending(path: str, at: float, new_inode: int) -> PendingWrite:
    return PendingWrite(
        0, path, 11, 1_700_000_000_123_456_789, 42, "sha256:o", new_inode, "sha256:n", ".t", at
    )


def lease_of(store: EtcdStore, claim_id: str, table: str = "claim") -> int:
    _, found = store.gateway.range(store.prefix + key(f"lease/{table}", claim_id))
    return found[0].lease if found else 0
