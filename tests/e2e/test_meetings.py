"""Release requests and meetings end to end through the installed CLI and the agents' hooks,
on the local SQLite store and on a real etcd: two identities (a Claude Code session and a
Codex thread, by their environment); a release request reaches the holder's next prompt
and its answer the requester's, each once; a meeting resolved by split ownership leaves each
claim its part, and a write outside one's part is refused as any write into another's claim
— by ``patch`` and by the pre-commit ``check`` alike."""

from __future__ import annotations

import itertools
import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import MEMKEEPER, Run, run_cli
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from pathlib import Path

EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
_prefixes = itertools.count(1)
CLAUDE, CODEX = "s-holder", "t-asker"
HOLDER, ASKER = f"claude-code:{CLAUDE}", f"codex:{CODEX}"
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, sample: Path) -> dict[str, str]:
    """The environment naming the test's store: the local one, or a fresh etcd prefix."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    if request.param == "sqlite":
        return {}
    cluster: Cluster = request.getfixturevalue("cluster")
    return cluster.store_env(f"meetings{next(_prefixes)}")


def holder(store: dict[str, str]) -> dict[str, str]:
    return {**store, "CLAUDE_CODE_SESSION_ID": CLAUDE, "CLAUDECODE": "1"}


def asker(store: dict[str, str]) -> dict[str, str]:
    return {**store, "CODEX_THREAD_ID": CODEX}


def prompt(root: Path, env: dict[str, str], agent: str, session: str) -> str:
    """What the agent's hook adds before its next prompt ("" for nothing)."""
    body: dict[str, Any] = {"session_id": session, "hook_event_name": "UserPromptSubmit"}
    body |= {"cwd": str(root), "prompt": "go on", "turn_id": "t1", "transcript_path": None}
    done = run_cli(root, "hook", agent, stdin=json.dumps(body), env=env)
    assert (done.code, done.stderr) == (0, "")
    if not done.stdout:
        return ""
    out: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    text: str = out["additionalContext"]
    return text


def cli(root: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> Run:
    return run_cli(root, *args, "--json", env=env, stdin=stdin)


def test_a_release_request_and_its_answer_each_reach_the_next_prompt_once(
    sample: Path, store: dict[str, str]
) -> None:
    held = cli(sample, holder(store), "claim", "CLAUDE.md#build", "--strict")
    assert held.json["agent"] == HOLDER
    refused = cli(sample, asker(store), "claim", "CLAUDE.md#build", "--request-release")
    assert refused.code == 5
    (asked,) = refused.json["release_requested"]
    said = prompt(sample, holder(store), "claude-code", CLAUDE)
    assert f"- [{asked}] {ASKER} asks you to release your claim about {held.json['id']}" in said
    assert "memkeeper answer N --release" in said
    assert prompt(sample, holder(store), "claude-code", CLAUDE) == ""  # once
    again = cli(sample, asker(store), "claim", "CLAUDE.md#build", "--request-release")
    assert again.json["release_requested"] == []  # asked already, not yet answered
    kept = cli(sample, holder(store), "answer", str(asked), "--reason", "tests run", "--eta", "60")
    assert kept.code == 0
    told = prompt(sample, asker(store), "codex", CODEX)
    assert f"{HOLDER} answers your release request about {held.json['id']}" in told
    assert "keeps claim" in told
    assert "tests run — expected in 60 s" in told
    assert prompt(sample, asker(store), "codex", CODEX) == ""
    (asked2,) = cli(sample, asker(store), "claim", "CLAUDE.md#build", "--request-release").json[
        "release_requested"
    ]
    assert cli(sample, holder(store), "answer", str(asked2), "--release").code == 0
    assert "released claim" in prompt(sample, asker(store), "codex", CODEX)
    assert cli(sample, asker(store), "claim", "CLAUDE.md#build").code == 0
    answered = cli(sample, store, "events", "--type", "release.answered").stdout.splitlines()
    assert [json.loads(line)["data"]["released"] for line in answered] == [False, True]


def test_a_split_leaves_each_claim_its_part_and_fences_the_rest(
    sample: Path, store: dict[str, str]
) -> None:
    one, two = holder(store), asker(store)
    assert cli(sample, one, "claim", "CLAUDE.md", "--strict").code == 0
    opened = cli(sample, two, "meeting", "open", "--with", HOLDER, "--targets", "CLAUDE.md")
    assert opened.json["meeting"]["rev"] == 1
    assert f"{ASKER} opened meeting 1 on CLAUDE.md" in prompt(sample, one, "claude-code", CLAUDE)
    proposed = cli(
        sample, two, "meeting", "propose", "1", "--expect-rev", "1",
        "--split", f"{HOLDER}=CLAUDE.md#build", "--split", f"{ASKER}=CLAUDE.md#testing",
    )  # fmt: skip
    assert proposed.json["meeting"]["rev"] == 2
    stale = cli(sample, one, "meeting", "accept", "1", "1", "--expect-rev", "1")
    assert (stale.code, json.loads(stale.stdout)["current"]["rev"]) == (3, 2)
    assert cli(sample, one, "meeting", "accept", "1", "1", "--expect-rev", "2").code == 0
    done = cli(sample, one, "meeting", "resolve", "1", "--expect-rev", "3", "--proposal", "1")
    assert done.json["meeting"]["state"] == "resolved"
    claims = cli(sample, store, "claims").json["claims"]
    assert {c["agent"]: c["targets"] for c in claims} == {
        HOLDER: ["CLAUDE.md#inventory-service/build"],
        ASKER: ["CLAUDE.md#inventory-service/testing"],
    }
    told = prompt(sample, two, "codex", CODEX)
    assert f"{HOLDER} resolved meeting 1: split" in told
    # inside one's part: written; outside it, in the other's: refused as any claimed write
    assert write(sample, one, "CLAUDE.md#build", "Built by the holder.\n").code == 0
    outside = write(sample, one, "CLAUDE.md#testing", "Not the holder's.\n")
    assert outside.code == 4
    assert f"{ASKER} holds strict write claim" in outside.stderr
    assert write(sample, two, "CLAUDE.md#testing", "Tested by the asker.\n").code == 0
    assert write(sample, two, "CLAUDE.md#build", "Not the asker's.\n").code == 4
    # the holder's agent editing the other's part: its PreToolUse gate denies it
    assert edit(sample, one, "Tested by the asker.", "Tested by the holder.") == "deny"
    assert edit(sample, one, "Built by the holder.", "Built by the holder, twice.") == "allow"


def edit(root: Path, env: dict[str, str], old: str, new: str) -> str:
    """The holder's Claude Code gate's verdict on an Edit of CLAUDE.md."""
    body: dict[str, Any] = {"session_id": CLAUDE, "hook_event_name": "PreToolUse"}
    body |= {"cwd": str(root), "tool_name": "Edit", "tool_use_id": "u1"}
    body["tool_input"] = {
        "file_path": str(root / "CLAUDE.md"),
        "old_string": old,
        "new_string": new,
    }
    done = run_cli(root, "hook", "claude-code", stdin=json.dumps(body), env=env)
    assert done.code == 0, done.stderr
    if not done.stdout:
        return "allow"
    verdict: str = json.loads(done.stdout)["hookSpecificOutput"].get("permissionDecision", "allow")
    return verdict


def write(root: Path, env: dict[str, str], ref: str, body: str) -> Run:
    rev = str(cli(root, env, "read", ref).json["rev"])
    return run_cli(root, "patch", ref, "--expect-rev", rev, "--body-file", "-", stdin=body, env=env)


def test_a_meeting_past_its_deadline_escalates_to_the_codeowners(
    sample: Path, store: dict[str, str]
) -> None:
    (sample / "CODEOWNERS").write_text("* @org/all\nCLAUDE.md @org/agents\n")
    one, two = holder(store), asker(store)
    assert cli(sample, one, "claim", "CLAUDE.md", "--strict").code == 0
    opened = cli(
        sample, two, "meeting", "open", "--with", HOLDER, "--targets", "CLAUDE.md",
        "--deadline", "0.5",
    )  # fmt: skip
    assert opened.code == 0
    subprocess.run(["sleep", "0.6"], check=True)
    said = prompt(sample, one, "claude-code", CLAUDE)
    assert "meeting 1 on CLAUDE.md goes to a human (its deadline passed): @org/agents" in said
    shown = cli(sample, store, "meeting", "show", "1").json["meeting"]
    assert (shown["state"], shown["owners"]) == ("escalated", ["@org/agents"])
    human = {**store, "MEMKEEPER_AGENT": "human"}
    resolved = cli(
        sample, human, "meeting", "resolve", "1", "--expect-rev", "2", "--handoff", ASKER
    )
    assert resolved.json["meeting"]["resolved_by"] == "human"
    claims = cli(sample, store, "claims").json["claims"]
    assert [(c["agent"], c["targets"]) for c in claims] == [(ASKER, ["CLAUDE.md"])]


def serialized_behind(sample: Path, store: dict[str, str]) -> str:
    """The holder's strict claim blocks the asker's (a meeting opens, by policy); a human
    resolves it ``serialize``, the asker first: the asker's claim id. The holder waits."""
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "meetings:\n  on_overlap: true\n")
    one, two = holder(store), asker(store)
    assert cli(sample, one, "claim", "CLAUDE.md#build", "--strict").code == 0
    blocked = cli(sample, two, "claim", "CLAUDE.md#build", "--strict")
    assert (blocked.code, blocked.json["meetings"]) == (5, [1])
    human = {**store, "MEMKEEPER_AGENT": "human"}
    done = cli(sample, human, "meeting", "resolve", "1", "--expect-rev", "1", "--serialize", ASKER)
    m = done.json["meeting"]
    assert (m["state"], m["order"], m["turn"]) == ("serializing", [ASKER, HOLDER], 0)
    (first,) = cli(sample, store, "claims").json["claims"]
    assert (first["agent"], first["targets"]) == (ASKER, ["CLAUDE.md#inventory-service/build"])
    said = prompt(sample, one, "claude-code", CLAUDE)
    assert f"then, in turn, {HOLDER}" in said
    # before its turn, the holder's writes are refused: by patch and by its agent's gate
    assert write(sample, one, "CLAUDE.md#build", "Not yet.\n").code == 4
    assert edit(sample, one, BUILD_LINE, "Not yet.") == "deny"
    claim_id: str = first["id"]
    return claim_id


BUILD_LINE = "make build"


def its_turn(sample: Path, store: dict[str, str], first: str) -> None:
    """The holder was granted the contested section, told once, and may now write it."""
    one = holder(store)
    (second,) = cli(sample, store, "claims").json["claims"]
    assert (second["agent"], second["targets"]) == (HOLDER, ["CLAUDE.md#inventory-service/build"])
    said = prompt(sample, one, "claude-code", CLAUDE)
    assert f"your turn in meeting 1: you now hold claim {second['id']}" in said
    assert prompt(sample, one, "claude-code", CLAUDE) == ""  # once
    m = cli(sample, store, "meeting", "show", "1").json["meeting"]
    assert (m["state"], m["turn"]) == ("resolved", 1)
    (over,) = cli(sample, store, "events", "--type", "meeting.handed_over").stdout.splitlines()
    handed = json.loads(over)["data"]
    assert (handed["from"], handed["to"], handed["claim"]) == (ASKER, HOLDER, second["id"])
    assert second["id"] != first
    assert edit(sample, one, BUILD_LINE, "make build-all") == "allow"
    assert write(sample, one, "CLAUDE.md#build", "Built in turn.\n").code == 0


def test_a_serialize_hands_over_as_soon_as_the_first_releases(
    sample: Path, store: dict[str, str]
) -> None:
    first = serialized_behind(sample, store)
    assert cli(sample, asker(store), "release", first).code == 0
    its_turn(sample, store, first)


def test_a_serialize_hands_over_as_soon_as_the_first_completes(
    sample: Path, store: dict[str, str]
) -> None:
    first = serialized_behind(sample, store)
    done = cli(sample, asker(store), "complete", first)
    assert (done.code, done.json["state"]) == (0, "completed")
    its_turn(sample, store, first)
