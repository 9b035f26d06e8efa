"""Work items changed after they were added, through the installed CLI in processes of their
own, on the local SQLite store and on a real etcd: an item waiting on a failed one says why
in ``work list`` and ``work show`` until ``work retry``; four editors racing ``work edit`` on
one rev — exactly one wins, the others get exit 3 and the winner's item; a cycle is refused
with exit 2 and nothing changed."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.conftest import MEMKEEPER, run_cli
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from pathlib import Path

EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
_prefixes = itertools.count(1)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, sample: Path) -> dict[str, str]:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    if request.param == "sqlite":
        return {}
    cluster: Cluster = request.getfixturevalue("cluster")
    return cluster.store_env(f"workchanges{next(_prefixes)}")


def test_blocked_until_retried_and_edits_race_by_rev(sample: Path, store: dict[str, str]) -> None:
    def work(*args: str, agent: str = "w1") -> tuple[int, str, str]:
        done = run_cli(sample, "work", *args, "--agent", agent, env=store)
        return done.code, done.stdout, done.stderr

    work("add", "build", "--paths", "src/")
    work("add", "test", "--after", "1")
    work("add", "ship", "--after", "2")
    work("next")
    assert work("fail", "1", "--reason", "linker died")[0] == 0
    code, out, _ = work("list")
    assert out.splitlines()[1:] == [
        "#2 [open] p0 test after #1 — blocked: depends on #1, which failed (linker died)",
        "#3 [open] p0 ship after #2 — blocked: depends on #1 (through #2), which failed "
        "(linker died)",
    ]
    shown = json.loads(work("show", "3", "--json")[1])["item"]
    assert shown["blocked"] == [{"id": 1, "reason": "linker died", "through": 2}]
    code, _, err = work("edit", "2", "--after", "3", "--expect-rev", "1")
    assert (code, "work items 2 → 3 → 2 wait on each other" in err) == (2, True)

    editors = [
        subprocess.Popen(
            [
                MEMKEEPER,
                "work",
                "edit",
                "3",
                "--title",
                f"ship {n}",
                "--expect-rev",
                "1",
                "--agent",
                f"e{n}",
                "--json",
            ],
            cwd=sample,
            env={**os.environ, **store},
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    codes = sorted(p.wait() for p in editors)
    assert codes == [0, 3, 3, 3]
    title = json.loads(work("show", "3", "--json")[1])["item"]["title"]
    assert title in {f"ship {n}" for n in range(4)}
    for p in editors:
        assert p.stdout is not None
        answer = json.loads(p.stdout.read())
        assert (answer.get("item") or answer["current"])["title"] == title
        p.stdout.close()

    assert work("retry", "1", agent="w2")[1] == "#1 [open] p0 build on src/\n"
    assert "blocked" not in work("list")[1]
    assert work("list", "--ready")[1] == "#1 [open] p0 build on src/\n"
