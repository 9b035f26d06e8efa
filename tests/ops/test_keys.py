"""``keys init | list | trust | revoke`` as operations on a workspace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.clock import FakeClock
from memkeeper.errors import Invalid, Refused
from memkeeper.identity import signers
from memkeeper.identity.sessions import Session
from memkeeper.ops import keys
from memkeeper.ops.workspace import Workspace


@pytest.fixture
def human(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    ws = Workspace(sample, "human", FakeClock(1_800_000_000.0))
    yield ws
    ws.close()


def test_init_makes_both_keys_once_and_says_how_to_trust_them(human: Workspace) -> None:
    made = keys.init(human, "alice", "box")["keys"]
    assert [(k["role"], k["name"], k["created"]) for k in made] == [
        ("human", "alice", True),
        ("machine", "box", True),
    ]
    assert made[0]["trust"] == f"memkeeper keys trust alice {made[0]['key']} --as 'human'"
    again = keys.init(human)["keys"]
    assert [(k["key"], k["created"]) for k in again] == [(k["key"], False) for k in made]


def test_trust_writes_the_tracked_file_and_records_it(human: Workspace, sample: Path) -> None:
    keys.init(human, "alice", "box")
    done = keys.trust(human, "alice", "human", ("human",))
    text = (sample / ".memkeeper-signers").read_text()
    assert text.splitlines()[-1] == f"alice human {done['key']}"
    event = human.store.events()[-1]
    assert (event.type, event.path, event.data["name"]) == (
        "keys.trusted",
        ".memkeeper-signers",
        "alice",
    )
    listed = keys.listing(human)
    assert listed["signers"][0]["mine"] == "human"
    assert [k["signing"] for k in listed["keys"]] == [True, False]


@pytest.mark.parametrize("before", [None, b"# reviewers\n"])
def test_a_save_by_a_writer_without_a_lock_is_never_overwritten(
    human: Workspace, sample: Path, monkeypatch: pytest.MonkeyPatch, before: bytes | None
) -> None:
    keys.init(human, "alice", "box")
    path = sample / ".memkeeper-signers"
    if before is not None:
        path.write_bytes(before)
    theirs = b"bob human ed25519:" + b"A" * 43 + b"=\n"
    real = signers.with_signer

    def saved_meanwhile(data: bytes, name: str, identities: tuple[str, ...], key: str) -> bytes:
        path.write_bytes(theirs)  # an editor's save, after memkeeper read the file
        return real(data, name, identities, key)

    monkeypatch.setattr(signers, "with_signer", saved_meanwhile)
    with pytest.raises(Invalid, match="changed while it was read — nothing was changed"):
        keys.trust(human, "alice", "human", ("human",))
    assert path.read_bytes() == theirs
    assert [e.type for e in human.store.events()].count("keys.trusted") == 0


def test_revoke_marks_the_line_and_records_it(human: Workspace, sample: Path) -> None:
    keys.init(human, "alice", "box")
    keys.trust(human, "box", "machine", ("*:*",))
    keys.revoke(human, "box")
    assert (sample / ".memkeeper-signers").read_text().splitlines()[-1].startswith("@revoked box")
    assert human.store.events()[-1].type == "keys.revoked"


@pytest.mark.parametrize(
    ("key", "says"),
    [("ssh-ed25519 AAAA", "is not a public key"), ("human", "you have no human key here")],
)
def test_a_bad_key_changes_nothing(human: Workspace, sample: Path, key: str, says: str) -> None:
    with pytest.raises(Invalid, match=says):
        keys.trust(human, "alice", key, ("human",))
    assert not (sample / ".memkeeper-signers").exists()


def test_trust_is_refused_inside_an_agents_session(sample: Path, tmp_path: Path) -> None:
    session = Session("claude-code", "s1", "CLAUDE_CODE_SESSION_ID")
    ws = Workspace(sample, session.identity, FakeClock(1_800_000_000.0), session)
    try:
        with pytest.raises(Refused, match="trust is a human's to grant"):
            keys.trust(ws, "me", "ed25519:" + "A" * 43, ("human",))
    finally:
        ws.close()
    assert not (sample / ".memkeeper-signers").exists()
