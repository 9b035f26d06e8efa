"""The CLI as separate processes: ``python -m memkeeper``, six processes patching one section
at once (retrying on a conflict, or merging) without losing an update, and ``mcp`` refusing
an SDK whose pydantic is missing — which needs an interpreter where the SDK was never half
imported."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.test_servers import NotInstalled, mcp_sdk_missing
from tests.conftest import MEMKEEPER

_WORKER = textwrap.dedent(
    """
    import json, subprocess, sys
    exe, worker = sys.argv[1], sys.argv[2]
    def run(*args, stdin=None):
        return subprocess.run([exe, *args, "--json"], input=stdin, capture_output=True,
                              text=True)
    retries = 0
    for n in range(6):
        while True:
            sec = json.loads(run("read", "CLAUDE.md#testing").stdout)
            body = sec["content"] + f"- update {worker}.{n}\\n"
            done = run("patch", "CLAUDE.md#testing", "--expect-rev", str(sec["rev"]),
                       "--body-file", "-", *sys.argv[3:], stdin=body)
            if done.returncode == 0:
                break
            assert done.returncode == 3, done.stdout
            retries += 1
    print(retries)
    """
)


@pytest.mark.parametrize("merge", [False, True], ids=["retrying", "merging"])
def test_six_processes_patching_one_section_lose_no_update(sample: Path, merge: bool) -> None:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, MEMKEEPER, str(w), *(["--merge"] if merge else [])],
            cwd=sample,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(6)
    ]
    retries = sum(int(worker.communicate(timeout=300)[0]) for worker in workers)
    assert all(w.returncode == 0 for w in workers)
    if merge:  # every stale patch only adds lines where another added: it merges
        assert retries <= 36 // 10
    done = subprocess.run(
        [MEMKEEPER, "read", "CLAUDE.md#testing", "--json"],
        cwd=sample,
        capture_output=True,
        text=True,
        check=True,
    )
    section = json.loads(done.stdout)
    for w in range(6):
        for n in range(6):
            assert section["content"].count(f"- update {w}.{n}\n") == 1
    assert section["rev"] == 1 + 36
    verify = subprocess.run([MEMKEEPER, "verify"], cwd=sample, capture_output=True, check=False)
    assert verify.returncode == 0


def test_python_dash_m_memkeeper_runs_the_cli(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memkeeper", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: memkeeper ")
    assert "Safe shared memory files for AI agents." in done.stdout
    assert all(verb in done.stdout for verb in ("read", "patch", "watch", "hook"))


_WITHOUT_PYDANTIC = f"""
from __future__ import annotations
import importlib.abc, sys
{inspect.getsource(NotInstalled)}
sys.meta_path.insert(0, NotInstalled("pydantic"))
from memkeeper.cli.main import main
sys.exit(main(["mcp", "--json"]))
"""


def test_mcp_without_pydantic_under_the_sdk_says_what_to_install(tmp_path: Path) -> None:
    """The SDK imports pydantic: it can only be refused under an SDK half imported, which
    must not stay behind in this process — so this one runs ``main`` in a child."""
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYDANTIC],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, json.loads(done.stdout)) == (
        1,
        {"status": "error", "message": mcp_sdk_missing("pydantic")},
    )
