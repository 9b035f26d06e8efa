"""The event chain verified from a checkpoint, and compacted, through the installed CLI in
processes of their own: a routine ``verify`` misses an edit before its checkpoint that
``verify --full`` names, catches one after it, and reports a forged checkpoint; ``compact``
leaves a log ``verify --full`` finds intact and ``events`` says where it starts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.fixture
def keyed(sample: Path, tmp_path: Path) -> dict[str, str]:
    """The sample under memkeeper, with a human key in a configuration of its own."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    for args in (["init"], ["keys", "init", "--human-name", "alice"]):
        assert run_cli(sample, *args, env=env).code == 0
    for n in range(4):
        assert run_cli(sample, "emit", "task.done", "--data", f'{{"n": {n}}}', env=env).code == 0
    return env


def tamper(root: Path, statement: str) -> None:
    db = sqlite3.connect(root / ".memkeeper" / "state.db")
    try:
        db.execute(statement)
        db.commit()
    finally:
        db.close()


def test_tampering_before_the_checkpoint_needs_full_and_after_it_does_not(
    sample: Path, keyed: dict[str, str]
) -> None:
    first = run_cli(sample, "verify", "--json", env=keyed)
    assert first.json["checkpoint"] == first.json["events"]
    tamper(sample, "UPDATE events SET actor = 'mallory' WHERE id = 2")
    assert run_cli(sample, "verify", env=keyed).code == 0
    full = run_cli(sample, "verify", "--full", "--json", env=keyed)
    assert full.code == 6
    assert [v["message"] for v in full.json["violations"]] == [
        "event 2: its hash does not match its content: the event was edited"
    ]
    tamper(sample, "UPDATE events SET actor = 'human' WHERE id = 2")
    assert run_cli(sample, "emit", "task.done", env=keyed).code == 0
    tamper(sample, "UPDATE events SET data = '{\"n\": 7}' WHERE id = (SELECT MAX(id) FROM events)")
    after = run_cli(sample, "verify", "--json", env=keyed)
    assert after.code == 6
    assert [v["rule"] for v in after.json["violations"]] == ["event-chain"]


def test_a_forged_checkpoint_is_reported_until_a_full_verify_replaces_it(
    sample: Path, keyed: dict[str, str]
) -> None:
    assert run_cli(sample, "verify", env=keyed).code == 0
    tamper(sample, "UPDATE checkpoints SET record = replace(record, '\"seq\":4', '\"seq\":3')")
    forged = run_cli(sample, "verify", "--json", env=keyed)
    assert forged.code == 6
    (found,) = forged.json["violations"]
    assert found["rule"] == "checkpoint"
    assert "does not verify: it was forged or altered" in found["message"]
    assert run_cli(sample, "verify", "--full", env=keyed).code == 6
    assert run_cli(sample, "verify", env=keyed).code == 0


def test_a_compacted_log_verifies_and_says_where_it_starts(
    sample: Path, keyed: dict[str, str]
) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "events:\n  keep: 1\n")
    done = run_cli(sample, "compact", "--json", env=keyed)
    assert done.json == {"status": "ok", "compacted": 3, "removed": 3, "more": False}
    full = run_cli(sample, "verify", "--full", "--json", env=keyed)
    assert (full.code, full.json["events"], full.json["compacted"]) == (0, 4, 3)
    listed = run_cli(sample, "events", env=keyed)
    assert len(listed.stdout.splitlines()) == 1
    assert "events up to 3 were compacted into a checkpoint" in listed.stderr
    assert run_cli(sample, "emit", "task.done", env=keyed).code == 0
    assert run_cli(sample, "verify", env=keyed).code == 0
