"""``memkeeper keys``: its command lines, its answers, its errors."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_main


def test_init_trust_list_revoke_from_the_command_line(sample: Path, tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    made = run_main(sample, "keys", "init", "--human-name", "alice", env=env)
    assert made.code == 0
    assert "made your human key alice ed25519:" in made.stdout
    assert "to trust it here: memkeeper keys trust alice ed25519:" in made.stdout
    trusted = run_main(sample, "keys", "trust", "alice", "human", env=env)
    assert trusted.code == 0
    assert trusted.stdout.startswith("trusted alice (ed25519:")
    listed = run_main(sample, "keys", "list", "--json", env=env).json
    assert [(s["name"], s["identities"]) for s in listed["signers"]] == [("alice", ["human"])]
    assert run_main(sample, "keys", "revoke", "alice", env=env).code == 0
    assert "alice REVOKED" in run_main(sample, "keys", "list", env=env).stdout


def test_missing_or_extra_words_are_usage_errors(sample: Path) -> None:
    assert run_main(sample, "keys", "trust", "alice").code == 2
    assert run_main(sample, "keys", "list", "alice").code == 2
    assert run_main(sample, "keys", "revoke", "a", "b").code == 2
    said = run_main(sample, "keys", "trust", "alice")
    assert "keys trust needs NAME KEY" in said.stderr
