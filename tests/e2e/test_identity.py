"""Who is acting, end to end through the real CLI: one identity per agent session, keys that
sign every event, trust that travels with a clone, and forged or missing signatures named."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import Run, run_cli
from tests.e2e.hooktables import initialised

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


def rev(root: Path, ref: str, env: dict[str, str]) -> int:
    found = run_cli(root, "read", ref, "--json", env=env).json["rev"]
    assert isinstance(found, int)
    return found


def patch(root: Path, ref: str, body: str, env: dict[str, str], *more: str) -> Run:
    expect = str(rev(root, ref, env))
    return run_cli(
        root, *more, "patch", ref, "--expect-rev", expect, "--body-file", "-", stdin=body, env=env
    )


def test_two_claude_code_sessions_are_two_identities_and_never_their_own_obstacle(
    tmp_path: Path,
) -> None:
    root = initialised(tmp_path / "repo")
    one = {"CLAUDE_CODE_SESSION_ID": "session-one", "CLAUDECODE": "1"}
    two = {"CLAUDE_CODE_SESSION_ID": "session-two", "CLAUDECODE": "1"}
    held = run_cli(root, "claim", "CLAUDE.md", "--strict", "--json", env=one)
    assert held.code == 0
    assert held.json["agent"] == "claude-code:session-one"
    assert run_cli(root, "claim", "CLAUDE.md", "--strict", "--json", env=two).code == 5
    assert patch(root, "CLAUDE.md#build", "By one.\n", one).code == 0  # its own claim
    refused = patch(root, "CLAUDE.md#build", "By two.\n", two)
    assert refused.code == 4
    assert "claude-code:session-one" in refused.stderr
    events = run_cli(root, "events", "--json", env=one).stdout.splitlines()
    assert '"actor": "claude-code:session-one"' in events[-1]


def test_an_agents_own_cli_call_cannot_change_a_humans_section(tmp_path: Path) -> None:
    root = initialised(tmp_path / "repo")
    agent = {"CLAUDE_CODE_SESSION_ID": "s1"}
    ref = "CLAUDE.md#release-process"
    before = (root / "CLAUDE.md").read_bytes()
    as_itself = patch(root, ref, "Ship on Fridays.\n", agent)
    assert as_itself.code == 4
    assert "you are 'claude-code:s1'" in as_itself.stderr
    as_human = patch(root, ref, "Ship on Fridays.\n", agent, "--agent", "human")
    assert as_human.code == 4
    assert "acting as human needs a key .memkeeper-signers trusts for human" in as_human.stderr
    assert (root / "CLAUDE.md").read_bytes() == before
    assert patch(root, ref, "Ship on Fridays.\n", {}).code == 0  # the human, in a shell


def test_trust_travels_with_a_clone_and_verify_names_bad_signatures(tmp_path: Path) -> None:
    origin = initialised(tmp_path / "origin")
    alice = {"XDG_CONFIG_HOME": str(tmp_path / "alice")}
    assert run_cli(origin, "keys", "init", "--human-name", "alice", env=alice).code == 0
    assert run_cli(origin, "keys", "trust", "alice", "human", env=alice).code == 0
    subprocess.run([*GIT, "-C", str(origin), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(origin), "commit", "-qm", "trust alice"], check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    assert run_cli(clone, "init", env=alice).code == 0
    assert patch(clone, "CLAUDE.md#build", "Signed by alice.\n", alice).code == 0
    assert run_cli(clone, "verify", env=alice).code == 0  # trusted through the tracked file

    mallory = {"XDG_CONFIG_HOME": str(tmp_path / "mallory")}
    assert run_cli(clone, "keys", "init", env=mallory).code == 0
    assert patch(clone, "CLAUDE.md#build", "By an unknown key.\n", mallory).code == 0
    nobody = {"XDG_CONFIG_HOME": str(tmp_path / "nobody")}
    assert patch(clone, "CLAUDE.md#build", "Unsigned.\n", nobody).code == 0
    with sqlite3.connect(clone / ".memkeeper/state.db") as db:  # a forger without the key
        (first,) = db.execute("SELECT min(id) FROM events WHERE actor = 'human'").fetchone()
        db.execute("UPDATE events SET sig = ? WHERE id = ?", ("A" * 86, first))
    said = run_cli(clone, "verify", env=alice)
    assert said.code == 6
    assert "a key the signers file does not list" in said.stderr
    assert "it is not signed" in said.stderr
    # A signature is not in the chain's hashes: one forged before alice's checkpoint (her
    # first verify) is a routine verify's blind spot, and --full's to name.
    assert "does not verify" not in said.stderr
    full = run_cli(clone, "verify", "--full", env=alice)
    assert "does not verify: it was forged or altered" in full.stderr
