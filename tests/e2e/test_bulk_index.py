"""``init`` indexing many files in batches while other processes read and patch some of them
(each patch under its file's lock, which a batch takes without waiting, leaving a busy file
to the one-file path): every patch lands exactly once, ``init`` lists every file, and the
index agrees with the files afterwards (``verify``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import MEMKEEPER, run_cli

FILES, SECTIONS, WORKERS, EACH = 160, 5, 3, 8

_WORKER = textwrap.dedent(
    """
    import json, subprocess, sys
    exe, worker, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    def run(*args, stdin=None):
        return subprocess.run([exe, *args, "--json"], input=stdin, capture_output=True,
                              text=True)
    for rel in files:
        ref = rel + "#note-2"
        while True:
            read = run("read", ref)
            assert read.returncode == 0, read.stdout + read.stderr
            sec = json.loads(read.stdout)
            body = sec["content"] + f"- worker {worker} was here\\n"
            done = run("patch", ref, "--expect-rev", str(sec["rev"]), "--body-file", "-",
                       stdin=body)
            if done.returncode == 0:
                break
            assert done.returncode == 3, done.stdout + done.stderr
    """
)


def write_files(root: Path) -> list[str]:
    (root / "memory/scale").mkdir(parents=True)
    rels = []
    for n in range(FILES):
        rel = f"memory/scale/f{n:03d}.md"
        notes = [f"## Note {s}\n\nfile {n}, fact {s}\n\n" for s in range(SECTIONS)]
        (root / rel).write_text("".join(notes))
        rels.append(rel)
    return rels


def test_init_in_batches_while_other_processes_patch_loses_nothing(sample: Path) -> None:
    assert run_cli(sample, "init").code == 0  # the store first: the new files come after
    rels = write_files(sample)
    mine = {w: rels[w::WORKERS][:EACH] for w in range(WORKERS)}
    init = subprocess.Popen(
        [MEMKEEPER, "init", "--json"], cwd=sample, stdout=subprocess.PIPE, text=True
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", _WORKER, MEMKEEPER, str(w), *mine[w]], cwd=sample)
        for w in range(WORKERS)
    ]
    listed = json.loads(init.communicate(timeout=300)[0])
    assert init.returncode == 0
    assert all(worker.wait(timeout=300) == 0 for worker in workers)
    counts = {f["path"]: f.get("sections") for f in listed["files"]}
    assert all(counts[rel] == SECTIONS for rel in rels)
    for worker, files in mine.items():
        for rel in files:
            text = (sample / rel).read_text()
            assert text.count(f"- worker {worker} was here\n") == 1, rel
    assert run_cli(sample, "verify").code == 0
    again = run_cli(sample, "init", "--json")  # nothing changed: the same answer
    assert again.code == 0
    assert json.loads(again.stdout)["files"] == listed["files"]
