"""``patch --merge`` and ``proposals`` through the command line: JSON, exit codes, and what a
person reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_main

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.peer("git"),
]

REF = "CLAUDE.md#build"


def patch(root: Path, body: str, rev: int, *extra: str) -> tuple[int, dict[str, object]]:
    done = run_main(root, "patch", REF, "--expect-rev", str(rev), "--body-file", "-", *extra,
                    "--json", stdin=body)  # fmt: skip
    return done.code, done.json


def current(root: Path) -> tuple[str, int]:
    read = run_main(root, "read", REF, "--json").json
    return str(read["content"]), int(read["rev"])


def test_a_stale_merge_that_lands_exits_0_saying_merged(sample: Path) -> None:
    body, rev = current(sample)
    assert patch(sample, body.replace("3.11", "3.12"), rev)[0] == 0
    code, out = patch(sample, body.rstrip("\n") + "\n- mine\n\n", rev, "--merge")
    assert code == 0
    assert out["merged"] is True
    assert out["base_rev"] == rev
    assert out["rev"] == 3
    people = run_main(sample, "patch", REF, "--expect-rev", "1", "--merge", "--body-file", "-",
                      stdin=body.rstrip("\n") + "\n- again\n\n")  # fmt: skip
    assert people.code == 0
    assert people.stdout.startswith(f"merged into CLAUDE.md#{out['key']} (from rev 1): now rev 4")


def test_an_overlapping_merge_exits_3_and_the_proposal_goes_through_its_verbs(
    sample: Path,
) -> None:
    body, rev = current(sample)
    patch(sample, body.replace("3.11", "3.12"), rev)
    code, out = patch(sample, body.replace("3.11", "3.13"), rev, "--merge")
    assert code == 3
    assert out["status"] == "conflict"
    assert out["merge"] == "overlap"
    proposal = out["proposal"]
    listed = run_main(sample, "proposals", "--json").json
    assert [p["id"] for p in listed["proposals"]] == [proposal]
    assert "body" not in listed["proposals"][0]
    people = run_main(sample, "proposals").stdout
    assert people.startswith(f"#{proposal} CLAUDE.md#")
    assert "from rev 1 by" in people
    shown = run_main(sample, "proposals", "show", str(proposal))
    assert "against rev 2 (now):" in shown.stdout
    assert "+- Python 3.13" in shown.stdout
    stale = run_main(sample, "proposals", "apply", str(proposal), "--expect-rev", "1", "--json")
    assert stale.code == 3
    applied = run_main(sample, "proposals", "apply", str(proposal), "--expect-rev", "2", "--json")
    assert applied.code == 0
    assert applied.json["proposal"]["state"] == "applied"
    assert "3.13" in current(sample)[0]
    again = run_main(sample, "proposals", "drop", str(proposal), "--json")
    assert again.code == 2
    assert "was applied by" in again.json["message"]
    assert run_main(sample, "proposals").stdout == "no open proposals\n"
    everything = run_main(sample, "proposals", "--all", "--json").json["proposals"]
    assert [(p["id"], p["state"], p["rev"]) for p in everything] == [(proposal, "applied", 3)]


def test_drop_closes_a_proposal(sample: Path) -> None:
    body, rev = current(sample)
    patch(sample, body.replace("3.11", "3.12"), rev)
    proposal = patch(sample, body.replace("3.11", "3.13"), rev, "--merge")[1]["proposal"]
    dropped = run_main(sample, "proposals", "drop", str(proposal))
    assert dropped.code == 0
    assert dropped.stdout.startswith(f"dropped #{proposal} ")
    events = run_main(sample, "events", "--json").stdout.splitlines()
    assert '"type": "proposal.dropped"' in events[-1]
