"""The scale benchmark's repositories: sample-repo plus many generated memory files.

Every generated file is ``memory/scale/fNNNNN.md`` (section-owned under the sample policy's
``memory/**``) with ``sections`` top-level ``## Note NNN`` sections of one short paragraph each,
so two repositories differ only in how many files (or sections) they hold.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.fixture import SAMPLE, bench_env

SCALE_DIR = "memory/scale"


def file_bytes(number: int, sections: int) -> bytes:
    """File ``number``: ``sections`` sections of one 60-odd byte line each."""
    parts = [
        f"## Note {s:03d}\n\nFile {number:05d}, fact {s:03d}: money is kept in integer cents.\n\n"
        for s in range(1, sections + 1)
    ]
    return "".join(parts).encode("utf-8")


def write_files(root: Path, files: int, sections: int) -> int:
    """Write the generated files under ``root``; the number of bytes written."""
    directory = root / SCALE_DIR
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    for number in range(1, files + 1):
        data = file_bytes(number, sections)
        (directory / f"f{number:05d}.md").write_bytes(data)
        total += len(data)
    return total


def memkeeper(root: Path, *args: str, cache: Path | None = None) -> tuple[float, bytes]:
    """Run ``memkeeper ARGS`` in ``root``: its wall time and stdout; a failure stops the run."""
    exe = str(Path(sys.executable).parent / "memkeeper")
    env = bench_env(cache or root.parent / "pycache", as_is=False)
    start = time.perf_counter()
    done = subprocess.run([exe, *args], cwd=root, env=env, capture_output=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        detail = (done.stdout + done.stderr).decode(errors="replace")
        command = " ".join(args)
        raise RuntimeError(f"memkeeper {command} in {root}: exit {done.returncode}: {detail}")
    return took, done.stdout


def files_repo(root: Path, files: int, sections: int = 20, *, init: bool = True) -> Path:
    """sample-repo copied to ``root`` (which must not exist), a git repository, ``files``
    generated files of ``sections`` sections each, then (unless ``init`` is false)
    ``memkeeper init``."""
    shutil.copytree(SAMPLE, root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    write_files(root, files, sections)
    if init:
        memkeeper(root, "init", "--json")
    return root
