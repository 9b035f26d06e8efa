"""The watchdog on a shared etcd store: a daemon judges the claims made in its own root (their
worktree is in it) — another machine's tree and branches are not seen from there — marks them
idle at ``idle_after`` as on SQLite, and the mark is visible from every root."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.daemon.step import Daemon
from memkeeper.ops import idleclaims
from tests.conftest import SAMPLE_REPO
from tests.daemon.conftest import MODIFIED, RESCAN_S
from tests.daemon.test_watchdog import IDLE_S, of, run_for, with_idle
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock

EXE, WHY = binary()
# the roots sharing a store are git repositories (their files' histories)
pytestmark = [pytest.mark.peer("git"), pytest.mark.skipif(EXE is None, reason=WHY)]
_prefixes = itertools.count(1)


@pytest.fixture
def pair(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> Iterator[tuple[Memory, Memory]]:
    """Roots a and b on one etcd prefix, each with ``idle_after`` of a minute."""
    for name, value in cluster.store_env(f"idle{next(_prefixes)}").items():
        monkeypatch.setenv(name, value)
    opened = []
    for name in ("a", "b"):
        root = tmp_path / name
        shutil.copytree(SAMPLE_REPO, root)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        with_idle(root, IDLE_S)
        opened.append(Memory(root, f"agent-{name}", clock=clock))
    yield opened[0], opened[1]
    for memory in opened:
        memory.close()


def test_a_daemon_marks_its_own_roots_idle_claims_and_leaves_the_others(
    pair: tuple[Memory, Memory], clock: FakeClock
) -> None:
    a, b = pair
    daemon = Daemon(b.workspace, RESCAN_S, quiet_s=0)
    daemon.caught_up(first=True)
    daemon.step(set())
    theirs = a.claims.take(["src/"], ttl=3600)
    ours = b.claims.take(["docs/"], ttl=3600)
    went = of(run_for(daemon, clock, IDLE_S), "idle")
    assert [o.detail.split(" ")[1] for o in went] == [ours.id]
    assert list(idleclaims.idle_marks(a.workspace, [theirs, ours])) == [ours.id]
    assert [m.kind for m in b.mail.inbox()] == ["idle"]


def test_a_file_change_in_its_root_keeps_a_claim_active(
    pair: tuple[Memory, Memory], clock: FakeClock
) -> None:
    _, b = pair
    daemon = Daemon(b.workspace, RESCAN_S, quiet_s=0)
    daemon.caught_up(first=True)
    daemon.step(set())
    b.claims.take(["docs/"], ttl=3600)
    run_for(daemon, clock, 40)
    page = b.root / "docs" / "notes.txt"
    page.write_text("more\n")
    daemon.step({(MODIFIED, str(page))})
    assert of(run_for(daemon, clock, 55), "idle") == []
    assert len(of(run_for(daemon, clock, 10), "idle")) == 1
