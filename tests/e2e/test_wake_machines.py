"""Waiters on one machine woken by a change made on another (issue 25's leftover, issue 26):
two copies of the repository, each with its own local state directory (``.memkeeper``, its
FIFOs), against one etcd prefix, as two machines would be. A ``claim --wait`` and a ``work
next --wait`` in one are woken by a ``release`` in the other through their etcd watch — no
FIFO crosses — within a fraction of the waits' backstop poll."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MEMKEEPER, run_cli
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)
_prefixes = itertools.count(1)
PROMPT_S = 2.5  # a busy machine's bound on starting nothing: the waiter is already up


@pytest.fixture
def machines(
    sample: Path, sample_template: Path, tmp_path: Path, cluster: Cluster
) -> tuple[Path, Path, dict[str, str]]:
    """Two roots (``here`` and ``there``) on one fresh etcd prefix, and its environment."""
    there = tmp_path / "there"
    shutil.copytree(sample_template, there, symlinks=True)
    store = cluster.store_env(f"wake{next(_prefixes)}")
    for root in (sample, there):
        subprocess.run(
            [MEMKEEPER, "init"], cwd=root, check=True, capture_output=True, env=_env(store)
        )
    return sample, there, store


def _env(store: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")} | store


def _woken_by_a_release(here: Path, there: Path, store: dict[str, str], *wait: str) -> float:
    """Seconds from a release ``there`` (committed) to the end of ``wait`` ``here``."""
    held = run_cli(there, "--agent", "holder", "claim", "src/", "--json", env=store)
    assert held.code == 0, held.stderr
    waiting = subprocess.Popen(
        [MEMKEEPER, "--agent", "waiter", *wait, "--json"],
        cwd=here, env=_env(store), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    time.sleep(2.0)  # blocked by now (a Python start-up is ~0.2 s on a quiet machine)
    assert waiting.poll() is None
    released = run_cli(there, "--agent", "holder", "release", held.json["id"], env=store)
    assert released.code == 0, released.stderr
    done = time.monotonic()
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert json.loads(out)
    return time.monotonic() - done


def test_a_claim_wait_on_one_machine_is_woken_by_a_release_on_another(
    machines: tuple[Path, Path, dict[str, str]],
) -> None:
    here, there, store = machines
    took = _woken_by_a_release(here, there, store, "claim", "src/api/", "--wait", "60")
    print(f"\nclaim --wait woken {took * 1000:.0f} ms after a release on another machine")
    assert took < PROMPT_S
    assert not list((there / ".memkeeper" / "wait").glob("c*.fifo"))  # no FIFO of ours there


def test_a_work_wait_on_one_machine_is_woken_by_a_release_on_another(
    machines: tuple[Path, Path, dict[str, str]],
) -> None:
    here, there, store = machines
    added = run_cli(there, "--agent", "lead", "work", "add", "the api", "--path", "src/api/",
                    env=store)  # fmt: skip
    assert added.code == 0, added.stderr
    took = _woken_by_a_release(here, there, store, "work", "next", "--wait", "60")
    print(f"\nwork next --wait woken {took * 1000:.0f} ms after a release on another machine")
    assert took < PROMPT_S
