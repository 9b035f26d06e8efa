"""The benchmark's repository: a copy of sample-repo plus two generated files, and a runner.

``bench-big.md`` holds 10,000 sections and ``bench-small.md`` 100, every one the same shape
(``## Note NNNNN``, a blank line, one 88-byte line, a blank line: 105 bytes), so the only
difference between the two is how many sections surround the one being patched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SAMPLE = Path(__file__).resolve().parent.parent / "sample-repo"
SECTION_BYTES = 105  # 10,000 of them make 1.05 MB (1 MiB), 100 make 10.5 KB
BIG, SMALL = "memory/bench-big.md", "memory/bench-small.md"
_FILLER = "the service keeps money in integer cents and every SQL query goes through db.py. " * 2


def section_body(number: int, variant: str = "") -> str:
    """A blank line, one line of ``SECTION_BYTES - 17`` bytes, a blank line."""
    line = f"Fact {number:05d}{variant}: {_FILLER}"[: SECTION_BYTES - 17]
    return f"\n{line}\n\n"


def document(count: int) -> bytes:
    """``count`` top-level ``## Note NNNNN`` sections of ``SECTION_BYTES`` bytes each."""
    parts = [f"## Note {n:05d}\n{section_body(n)}" for n in range(1, count + 1)]
    return "".join(parts).encode("utf-8")


class Shell:
    """Runs commands in the benchmark repository with one fixed environment, timing them."""

    def __init__(self, root: Path, cache: Path, as_is: bool) -> None:
        self.root = root
        self.memkeeper = str(Path(sys.executable).parent / "memkeeper")
        self.env = bench_env(cache, as_is)

    def run(self, argv: Sequence[str]) -> tuple[float, bytes]:
        """Wall time of one command (spawn to exit) and its stdout; a failure stops the run."""
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=self.root, env=self.env, capture_output=True, check=False)
        took = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)}: exit {done.returncode}: "
                f"{done.stdout.decode()}{done.stderr.decode()}"
            )
        return took, done.stdout

    def memkeeper_run(self, *args: str) -> tuple[float, bytes]:
        return self.run([self.memkeeper, *args])


def bench_env(cache: Path, as_is: bool) -> dict[str, str]:
    """The environment of every timed command, ``memkeeper`` and ``python -c pass`` alike.

    Unless ``as_is``, bytecode is cached (under ``cache``, so no source tree is touched) even
    where ``PYTHONDONTWRITEBYTECODE`` is set: an installed memkeeper has its ``.pyc`` files,
    and without them every call of an editable install compiles memkeeper's modules again.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    if not as_is:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return {**env, "MEMKEEPER_AGENT": "bench"}


def sample_copy(root: Path) -> Path:
    """A copy of sample-repo at ``root`` (which must not exist), made a git repository."""
    shutil.copytree(SAMPLE, root)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def make_repo(work: Path, as_is: bool) -> Shell:
    """Copy the sample repository into ``work``, add the generated files, ``memkeeper init``."""
    root = sample_copy(work / "repo")
    (root / BIG).write_bytes(document(10_000))
    (root / SMALL).write_bytes(document(100))
    shell = Shell(root, work / "pycache", as_is)
    shell.memkeeper_run("init", "--json")
    return shell
