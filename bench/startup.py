"""Where a CLI call's start-up goes: import sets timed against ``python -c pass``, interleaved.

    .venv/bin/python -m bench.startup [--runs 40]

Each row is one command, run in turn with the others so all see the same noise; the
difference of medians against ``python -c pass`` is what that import set costs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench.fixture import make_repo
from bench.stats import interleave, summarize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from bench.fixture import Shell

STDLIB = "re, json, sqlite3, hashlib"  # the stdlib a read of an indexed file cannot avoid
# (label, the modules ``python -c`` imports; None for the memkeeper console script itself)
PROBES: list[tuple[str, str | None]] = [
    ("`python -c pass`", ""),
    (f"`import {STDLIB}`", STDLIB),
    ("… + `typing, pathlib, argparse`", f"{STDLIB}, typing, pathlib, argparse"),
    ("`import re, memkeeper.cli.main` (what `read` imports)", "re, memkeeper.cli.main"),
    (
        "… + `memkeeper.markdown.sections` (the Markdown parser)",
        "re, memkeeper.cli.main, memkeeper.markdown.sections",
    ),
    ("`memkeeper read CLAUDE.md#build --json`", None),
]


def probe(shell: Shell, modules: str | None) -> Callable[[], Sequence[float]]:
    """One timed run of the probe; ``re`` stands for the console script's own import."""
    if modules is None:
        command = [shell.memkeeper, "read", "CLAUDE.md#build", "--json"]
    else:
        command = [sys.executable, "-c", f"import {modules}" if modules else "pass"]

    def step() -> list[float]:
        return [shell.run(command)[0]]

    return step


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.startup", description=__doc__)
    parser.add_argument("--runs", type=int, default=40, help="rounds (40)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memkeeper-startup-"))
    try:
        shell = make_repo(work, as_is=False)
        samples = interleave([probe(shell, a) for _, a in PROBES], args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = summarize(samples[0]).median
    print("| command | median (p90) | over `pass` | ratio |\n| --- | --- | --- | --- |")
    for (label, _), kept in zip(PROBES, samples, strict=True):
        got = summarize(kept)
        print(
            f"| {label} | {got.median * 1e3:.1f} ms ({got.p90 * 1e3:.1f}) | "
            f"+{(got.median - base) * 1e3:.1f} ms | {got.median / base:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
