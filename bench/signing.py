"""What signing costs an event: ``Memory.emit`` with a key and without, interleaved in one run.

    .venv/bin/python -m bench.signing [--events 200] [--rounds 20]

Two initialised copies of ``sample-repo/`` in the run's temp dir: one Memory signs every event
with an Ed25519 key (``$MEMKEEPER_KEY``), the other has no key and writes unsigned events. In
each round, a batch of emits on each side in turn, every emit timed alone, so both sides see the
same noise. The difference of the medians is what signing adds to an event (the goal: ≤ 0.1 ms);
the signature alone and its check (what ``verify`` does per event) are timed beside them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.fixture import sample_copy
from bench.stats import interleave, summarize
from memkeeper import Memory
from memkeeper.fs import keyring
from memkeeper.identity import keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

GOAL_MS = 0.1  # what signing may add to one event
HASH = "9f" * 32  # an event's chain hash: what is signed


def _memory(root: Path) -> Memory:
    from memkeeper.ops import setup

    memory = Memory(str(root), "bench")
    setup.init(memory.workspace, None)
    return memory


def _emits(memory: Memory, count: int) -> Callable[[], list[float]]:
    def step() -> list[float]:
        took = []
        for number in range(count):
            start = time.perf_counter()
            memory.emit("bench.tick", {"n": number})
            took.append(time.perf_counter() - start)
        return took

    return step


def _timed(call: Callable[[], object], count: int) -> Callable[[], list[float]]:
    def step() -> list[float]:
        took = []
        for _ in range(count):
            start = time.perf_counter()
            call()
            took.append(time.perf_counter() - start)
        return took

    return step


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.signing", description=__doc__)
    parser.add_argument("--events", type=int, default=200, help="emits per side per round")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memkeeper-bench-signing-"))
    saved = {name: os.environ.get(name) for name in ("XDG_CONFIG_HOME", keyring.KEY_ENV)}
    try:
        os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # no key of the user's is used
        signer, _ = keyring.create(os.environ, "machine", "bench")
        os.environ[keyring.KEY_ENV] = keyring.key_path(os.environ, "machine")
        signed = _memory(sample_copy(work / "signed"))
        signed.emit("bench.start")  # the key is read once, here
        del os.environ[keyring.KEY_ENV]
        unsigned = _memory(sample_copy(work / "unsigned"))
        unsigned.emit("bench.start")
        public, signature = signer.sign(HASH)
        steps = [
            _emits(signed, args.events),
            _emits(unsigned, args.events),
            _timed(lambda: signer.sign(HASH), args.events),
            _timed(lambda: keys.valid(public, HASH, signature), args.events),
        ]
        samples = interleave(steps, args.rounds)
        assert all(event.sig for event in signed.events(since=0) if event.type == "bench.tick")
        assert not any(event.sig for event in unsigned.events(since=0))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(work, ignore_errors=True)
    with_key, without, sign, check = (summarize(kept) for kept in samples)
    added_ms = (with_key.median - without.median) * 1000
    print(f"{args.events} emits per side per round, {args.rounds} rounds, interleaved\n")
    print("| measure | median (p90) |")
    print("| --- | --- |")
    rows = [
        ("`Memory.emit`, signed (a machine key)", with_key),
        ("`Memory.emit`, unsigned (no key)", without),
        ("the signature alone (`Signer.sign` of a chain hash)", sign),
        ("its check (`keys.valid`, what `verify` does per event)", check),
    ]
    for label, summary in rows:
        print(f"| {label} | {summary.median * 1000:.3f} ms ({summary.p90 * 1000:.3f}) |")
    met = "met" if added_ms <= GOAL_MS else "NOT met"
    ratio = with_key.median / without.median
    print(
        f"\nsigning adds {added_ms:.3f} ms per event ({ratio:.2f}x an unsigned emit); "
        f"goal ≤ {GOAL_MS} ms: {met}"
    )
    return 0 if added_ms <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
