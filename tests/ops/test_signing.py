"""Every event signed by the writing process's key; writes refused, before anything changes,
to a process acting as someone it cannot prove to be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memkeeper.clock import FakeClock
from memkeeper.errors import Refused
from memkeeper.fs import keyring
from memkeeper.identity import keys, signers
from memkeeper.identity.sessions import Session
from memkeeper.ops import append, patch
from memkeeper.ops.workspace import Workspace

SESSION = Session("claude-code", "s1", "CLAUDE_CODE_SESSION_ID")
DECISIONS = "memory/decisions.md"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    return env


def workspace(root: Path, agent: str, session: Session | None = None) -> Workspace:
    ws = Workspace(root, agent, FakeClock(1_800_000_000.0), session)
    assert ws.store is not None
    return ws


def trust(root: Path, name: str, key: str, *identities: str) -> None:
    path = root / ".memkeeper-signers"
    data = path.read_bytes() if path.exists() else b""
    path.write_bytes(signers.with_signer(data, name, identities, key))


def add_entry(ws: Workspace) -> None:
    append.append(ws, DECISIONS, "A decision.\n")


def test_events_are_signed_with_the_humans_key_outside_a_session(
    sample: Path, config: dict[str, str]
) -> None:
    human, _ = keyring.create(config, "human", "alice")
    ws = workspace(sample, "human")
    try:
        add_entry(ws)
        (event,) = ws.store.events()[-1:]
        assert event.signer == human.public
        assert event.sig is not None
        assert keys.valid(human.public, event.hash, event.sig)
    finally:
        ws.close()


def test_an_agent_sessions_events_are_signed_with_the_machines_key(
    sample: Path, config: dict[str, str]
) -> None:
    keyring.create(config, "human", "alice")
    machine, _ = keyring.create(config, "machine", "box")
    ws = workspace(sample, SESSION.identity, SESSION)
    try:
        add_entry(ws)
        assert ws.store.events()[-1].signer == machine.public
    finally:
        ws.close()


def test_without_a_key_events_are_unsigned(sample: Path, config: dict[str, str]) -> None:
    ws = workspace(sample, "human")
    try:
        add_entry(ws)
        assert (ws.store.events()[-1].signer, ws.store.events()[-1].sig) == (None, None)
    finally:
        ws.close()


def test_acting_as_human_from_a_session_is_refused_and_changes_nothing(
    sample: Path, config: dict[str, str]
) -> None:
    machine, _ = keyring.create(config, "machine", "box")
    trust(sample, "box", machine.public, "*:*")
    before = (sample / DECISIONS).read_bytes()
    ws = workspace(sample, "human", SESSION)
    try:
        events = len(ws.store.events())
        with pytest.raises(Refused, match="acting as human needs a key") as refused:
            add_entry(ws)
        assert refused.value.reason == "identity"
        assert "its key ed25519:" in refused.value.message
        assert "(box) may not sign as human" in (refused.value.message)
        assert (sample / DECISIONS).read_bytes() == before
        assert len(ws.store.events()) == events
    finally:
        ws.close()


def test_acting_as_human_from_a_session_with_the_humans_key_is_allowed(
    sample: Path, config: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    human, _ = keyring.create(config, "human", "alice")
    trust(sample, "alice", human.public, "human")
    monkeypatch.setenv("MEMKEEPER_KEY", keyring.key_path(config, "human"))
    ws = workspace(sample, "human", SESSION)
    try:
        add_entry(ws)
        assert ws.store.events()[-1].signer == human.public
    finally:
        ws.close()


def test_a_label_nobody_has_a_key_for_needs_no_key(sample: Path, config: dict[str, str]) -> None:
    ws = workspace(sample, "planner", SESSION)
    try:
        add_entry(ws)
        assert ws.store.events()[-1].actor == "planner"
    finally:
        ws.close()


def test_with_signatures_required_an_untrusted_writer_is_refused(
    sample: Path, config: dict[str, str]
) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "signatures: required\n")
    keyring.create(config, "human", "alice")
    ws = workspace(sample, "human")
    try:
        ws.refresh("CLAUDE.md")
        rev = ws.section_row("CLAUDE.md", "build").rev
        with pytest.raises(Refused, match="the policy requires signatures"):
            patch.patch(ws, "CLAUDE.md#build", b"New.\n", expect_rev=rev)
    finally:
        ws.close()
    trust(sample, "alice", keyring.load(keyring.key_path(config, "human")).public, "human")  # type: ignore[union-attr]
    ws = workspace(sample, "human")
    try:
        patch.patch(ws, "CLAUDE.md#build", b"New.\n", expect_rev=rev)
    finally:
        ws.close()


def test_what_a_process_noticed_is_recorded_even_with_an_untrusted_key(
    sample: Path, config: dict[str, str]
) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "signatures: required\n")
    ws = workspace(sample, "human")
    try:
        ws.refresh(DECISIONS)
        path = sample / DECISIONS
        path.write_text(path.read_text() + "\n## 2026-12-06 — bob\n\nSaved by hand.\n")
        ws.refresh(DECISIONS)  # a read: never refused
        assert ws.store.events()[-1].actor == "external"
    finally:
        ws.close()
    assert os.environ["XDG_CONFIG_HOME"] == config["XDG_CONFIG_HOME"]
