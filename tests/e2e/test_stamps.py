"""Stat stamps through the installed CLI: ``check``, ``verify`` and ``status`` read only the
files whose stamp moved, yet catch a same-size edit whose mtime was put back; a file looked at
in the tick of its last change (racily clean) has no stamp recorded and is read again; and
``--full`` finds what a stamp cannot see.

A look "a minute later" runs under libfaketime (the process's clocks a minute ahead; the file
system's timestamps stay the kernel's): its stamps are old enough to be trusted at once. One
"a minute earlier" sees every file as just saved, whatever the machine's load."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.names import STAMP_FILE
from tests.conftest import MEMKEEPER, Run, run_cli

if TYPE_CHECKING:
    from tests.etcd_cluster import Cluster

FAKETIME = shutil.which("faketime")
FILE = "memory/architecture.md"


def later(root: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """``memkeeper ARGS --json`` a minute from now (libfaketime)."""
    return shifted(root, "+60s", *args, env=env)


def shifted(root: Path, shift: str, *args: str, env: dict[str, str] | None = None) -> Run:
    """``memkeeper ARGS --json`` under ``faketime -f SHIFT`` (with ``env`` added)."""
    if FAKETIME is None:
        pytest.skip("faketime (libfaketime) not installed")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    done = subprocess.run(
        [FAKETIME, "-f", shift, MEMKEEPER, *args, "--json"],
        cwd=root,
        env={**clean, **(env or {}), "MEMKEEPER_AGENT": "agent-a"},
        capture_output=True,
        text=True,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def stamps(root: Path) -> dict[str, tuple[int, str | None]]:
    """``path: (ctime_ns, clean)`` of each stamp the store holds."""
    with sqlite3.connect(root / ".memkeeper" / "state.db") as db:
        rows = db.execute("SELECT path, ctime_ns, clean FROM stamps").fetchall()
    return {path: (ctime, clean) for path, ctime, clean in rows}


def hide_text(root: Path) -> None:
    """Three ASCII bytes become one zero-width space (three bytes in UTF-8), the mtime is put
    back: the size and mtime stay, only the ctime says the file changed."""
    path = root / FILE
    before = os.stat(path)
    data = path.read_bytes()
    at = next(i for i in range(len(data) // 2, len(data)) if data[i : i + 3].isalpha())
    path.write_bytes(data[:at] + "\u200b".encode() + data[at + 3 :])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )


@pytest.fixture
def repo(sample: Path) -> Path:
    """The sample under memkeeper, committed (``check`` asks git's HEAD of append-only logs)."""
    assert run_cli(sample, "init").code == 0
    for args in (
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "b"],
    ):
        subprocess.run(["git", *args], cwd=sample, check=True, capture_output=True)
    return sample


def test_each_look_records_stamps_and_a_same_size_edit_is_still_caught(repo: Path) -> None:
    for verb in ("status", "verify", "check"):
        assert later(repo, verb).code == 0
    recorded = stamps(repo)
    assert recorded[FILE][1] is not None  # check found it clean
    assert "memory/decisions.md" not in {p for p, (_, clean) in recorded.items() if clean}
    hide_text(repo)
    failed = later(repo, "check")
    assert failed.code == 6, failed.stdout + failed.stderr
    assert [(v["path"], v["rule"]) for v in failed.json["violations"]] == [(FILE, "hidden-text")]
    changed = later(repo, "verify")
    assert changed.code == 6
    assert [v["path"] for v in changed.json["violations"]] == [FILE]
    assert later(repo, "status").code == 0  # indexes the change …
    assert later(repo, "verify").code == 0  # … which verify then finds in the index


def test_a_file_looked_at_in_the_tick_of_its_last_change_is_read_again(repo: Path) -> None:
    """Racily clean: right after a save, no stamp is recorded, so an edit that keeps the size
    and the mtime within that tick is read at the next look — whatever its stamp says."""
    path = repo / FILE
    path.write_bytes(path.read_bytes() + b"\nA line.\n")
    assert shifted(repo, "-60s", "status").code == 0  # the save was "just now"
    assert shifted(repo, "-60s", "check").code == 0
    assert FILE not in stamps(repo)
    hide_text(repo)
    failed = run_cli(repo, "check", "--json")
    assert failed.code == 6
    assert [v["rule"] for v in failed.json["violations"]] == ["hidden-text"]


def test_full_reads_what_a_stamp_cannot_see(repo: Path) -> None:
    """A change the stamp does not show (forged here: the recorded stamp rewritten to the
    edited file's) passes a routine look, and ``--full`` finds it."""
    assert later(repo, "verify").code == 0
    assert later(repo, "check").code == 0
    hide_text(repo)
    info = os.lstat(repo / FILE)
    with sqlite3.connect(repo / ".memkeeper" / "state.db") as db:
        db.execute(
            "UPDATE stamps SET ctime_ns = ?, inode = ? WHERE path = ?",
            (info.st_ctime_ns, info.st_ino, FILE),
        )
    assert later(repo, "verify").code == 0
    assert later(repo, "check").code == 0
    full = later(repo, "verify", "--full")
    assert [v["path"] for v in full.json["violations"]] == [FILE]
    checked = later(repo, "check", "--full")
    assert [v["rule"] for v in checked.json["violations"]] == ["hidden-text"]
    status = later(repo, "status", "--full")  # reads it: the edit is indexed
    assert status.code == 0
    assert later(repo, "verify", "--full").code == 0


def test_with_a_shared_store_the_stamps_stay_in_this_root_s_home(
    sample: Path, cluster: Cluster
) -> None:
    """A stamp describes this machine's file: with etcd it is kept in ``.memkeeper/stamps.json``
    and a change its stamp shows is read (verify brings this root's edits into the store)."""
    host, port = cluster.endpoints[0]
    env = {"MEMKEEPER_STORE": f"etcd://{host}:{port}/stamps{os.getpid()}"}
    assert later(sample, "init", env=env).code == 0
    assert later(sample, "verify", env=env).code == 0
    saved = json.loads((sample / ".memkeeper" / STAMP_FILE).read_text())
    assert FILE in saved["stamps"]
    assert not (sample / ".memkeeper" / "state.db").exists()
    hide_text(sample)
    assert later(sample, "verify", env=env).code == 0  # the edit read, and pushed to the store
    assert "\u200b" in later(sample, "read", FILE, env=env).json["content"]
