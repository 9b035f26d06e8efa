"""Splitting a file into sections: the fast path (``markdown/fastsplit``) beside markdown-it.

    .venv/bin/python -m bench.split [--rounds 5]

Two sets of files, each split whole by ``sections.split`` as it is and again with the fast
path turned off (markdown-it for every file), the two alternating round by round so both
see the same noise: the scale benchmark's generated files (1,000 of 20 sections: the fast
path's case) and sample-repo's memory files (which may hold what sends a file to
markdown-it). The figure is the median time per file, and the ratio of the two.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from unittest import mock

from bench.fixture import SAMPLE
from bench.scale.files import file_bytes
from memkeeper.markdown import fastsplit
from memkeeper.markdown.sections import split


def per_file(datas: list[bytes], fast: bool) -> float:
    """Seconds per file to split every one of ``datas``."""
    if fast:
        start = time.perf_counter()
        for data in datas:
            split(data)
        return (time.perf_counter() - start) / len(datas)
    with mock.patch.object(fastsplit, "headings", return_value=None):
        start = time.perf_counter()
        for data in datas:
            split(data)
        return (time.perf_counter() - start) / len(datas)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.split", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    sets = {
        "generated, 20 sections": [file_bytes(n, 20) for n in range(1, 1001)],
        "sample-repo memory files": [p.read_bytes() for p in sorted(SAMPLE.rglob("*.md"))],
    }
    print("| files | fast path taken | fast path | markdown-it | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for name, datas in sets.items():
        taken = sum(
            fastsplit.headings(d.decode().removeprefix("\ufeff")) is not None for d in datas
        )
        fast: list[float] = []
        slow: list[float] = []
        for round_ in range(args.rounds):
            for each in (True, False) if round_ % 2 else (False, True):
                (fast if each else slow).append(per_file(datas, each))
        f, s = statistics.median(fast), statistics.median(slow)
        print(
            f"| {name} ({len(datas)}) | {taken}/{len(datas)} | {f * 1e3:.3f} ms "
            f"| {s * 1e3:.3f} ms | {s / f:.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
