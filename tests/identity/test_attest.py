"""What the signers file says of each event's signature."""

from __future__ import annotations

from memkeeper.events import next_event
from memkeeper.identity import attest, keys, signers

ALICE = keys.Signer("alice", bytes(range(32)))
BOX = keys.Signer("box", bytes(32))
TRUSTED = signers.parse(f"alice human {ALICE.public}\nbox *:* {BOX.public}\n".encode(), "f")
TS = "2026-12-06T10:00:00.000Z"


def test_a_trusted_key_signing_as_its_identities_is_fine() -> None:
    event = next_event(None, TS, "human", "note", None, None, {}, ALICE.sign)
    assert attest.judge(event, TRUSTED) is None
    agent = next_event(None, TS, "claude-code:1", "note", None, None, {}, BOX.sign)
    assert attest.judge(agent, TRUSTED) is None


def test_every_way_a_signature_fails_is_named() -> None:
    unsigned = next_event(None, TS, "human", "note", None, None, {})
    forged = next_event(None, TS, "human", "note", None, None, {}, ALICE.sign)._replace(
        data={"x": 1}
    )  # its content changed after signing: the stored hash no longer matches either
    moved = forged._replace(hash="sha256:" + "0" * 64)
    stranger = next_event(
        None, TS, "human", "note", None, None, {}, keys.Signer("m", b"\7" * 32).sign
    )
    agent_as_human = next_event(None, TS, "human", "note", None, None, {}, BOX.sign)
    judged = {
        "unsigned": attest.judge(unsigned, TRUSTED),
        "moved": attest.judge(moved, TRUSTED),
        "stranger": attest.judge(stranger, TRUSTED),
        "agent_as_human": attest.judge(agent_as_human, TRUSTED),
    }
    assert judged["unsigned"] == "it is not signed"
    assert judged["moved"] is not None
    assert "does not verify" in judged["moved"]
    assert judged["stranger"] is not None
    assert "does not list" in judged["stranger"]
    assert judged["agent_as_human"] == "it is signed by box, whose key may not sign as human"
    assert [what for _, what in attest.problems([unsigned, agent_as_human], TRUSTED)] == [
        "it is not signed",
        "it is signed by box, whose key may not sign as human",
    ]
