"""A store lost under a running fleet — its database emptied, deleted, or its write-ahead log
deleted — is never replaced by a fresh one behind the agents' backs: a claim held live is not
granted to another agent, fencing tokens do not start again, and verify does not say ok."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

DAMAGES = {
    "emptied": lambda home: (home / "state.db").write_bytes(b""),
    "deleted": lambda home: (home / "state.db").unlink(),
    "log deleted": lambda home: (home / "state.db-wal").unlink(),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_lost_store_grants_nothing_and_hands_out_no_token_again(
    sample: Path, damage: str
) -> None:
    assert run_cli(sample, "init").code == 0
    for n in range(4):
        taken = run_cli(sample, "claim", f"src/{n}/", "--strict", "--agent", "a", "--json")
        assert taken.json["token"] == n + 1
    home = sample / ".memkeeper"
    # The CLI exits without a checkpoint: the last commits are in the log, which "log
    # deleted" takes away (the index in state.db-shm still counts them).
    assert (home / "state.db-wal").exists()
    DAMAGES[damage](home)
    other = run_cli(sample, "claim", "src/3/", "--agent", "b", "--json")
    assert other.code == 1
    assert other.json["reason"] == "store_lost"
    assert "move" in other.json["message"]
    assert run_cli(sample, "verify", "--json").json["reason"] == "store_lost"
    assert run_cli(sample, "read", "CLAUDE.md#build", "--json").code == 1
