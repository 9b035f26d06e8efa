"""The operations' tests on both store backends (issue 12, item 5): the modules of ``BOTH`` run
every test that uses ``memory`` twice, on SQLite and on a real etcd (a single-member cluster
per test process, a fresh prefix per test, chosen through ``MEMKEEPER_STORE`` as a user
chooses it). A test that is about SQLite itself — its files, its syncs, its pending rows —
is marked ``sqlite_only`` and runs once."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.clock import FakeClock
from memkeeper.ops.workspace import Workspace
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
BOTH = frozenset(
    {
        "test_append",
        "test_bulkindex",
        "test_claims",
        "test_claimviews",
        "test_claimwaits",
        "test_claimsearch",
        "test_claimsimilar",
        "test_claimwrites",
        "test_emit",
        "test_idleclaims",
        "test_mailwait",
        "test_patch",
        "test_patch_merge",
        "test_proposals",
        "test_read",
        "test_reconcile",
        "test_regen",
        "test_workedits",
    }
)
_prefixes = itertools.count(1)
START = 1_700_000_000.0  # the fake clock's first reading
Agents = Callable[[str], Memory]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if "store_kind" not in metafunc.fixturenames or module not in BOTH:
        return
    if metafunc.definition.get_closest_marker("sqlite_only") is not None:
        metafunc.parametrize("store_kind", ["sqlite"])
        return
    etcd = pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))
    metafunc.parametrize("store_kind", ["sqlite", etcd])


@pytest.fixture
def store_kind() -> str:
    return "sqlite"


@pytest.fixture
def memory(
    sample: Path, store_kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Memory]:
    """A ``Memory`` on the sample copy, as agent ``agent-a``, on the test's store."""
    if store_kind == "etcd":
        cluster: Cluster = request.getfixturevalue("cluster")
        for name, value in cluster.store_env(f"ops{next(_prefixes)}").items():
            monkeypatch.setenv(name, value)
    opened = Memory.open(sample, agent="agent-a")
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def agents(sample: Path, clock: FakeClock) -> Iterator[Agents]:
    """``agents("a")``: a ``Memory`` of agent ``a`` on the sample, sharing the fake clock."""
    opened: list[Memory] = []

    def open_as(agent: str) -> Memory:
        memory = Memory.open(sample, agent=agent, clock=clock)
        opened.append(memory)
        return memory

    yield open_as
    for memory in opened:
        memory.close()


@pytest.fixture
def ws(sample: Path) -> Iterator[Workspace]:
    """A workspace on the sample, its store made (without one, nothing is cached or indexed)."""
    opened = Workspace(sample, "agent-a", FakeClock(1_800_000_000.0))
    assert opened.store is not None
    yield opened
    opened.close()


def edit(root: Path, rel: str, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in the file ``rel`` of ``root``."""
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def kinds(memory: Memory, prefix: str = "claim.") -> list[tuple[str, str, str]]:
    """The events of ``memory``'s log of that kind: (type, actor, the claim's id)."""
    return [(e.type, e.actor, e.data["id"]) for e in memory.events() if e.type.startswith(prefix)]
