"""What the signers file says of each event's signature, and of a checkpoint's."""

from __future__ import annotations

from memkeeper import checkpoints
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


# -- checkpoints -------------------------------------------------------------------------------


def checkpoint(signer: keys.Signer, actor: str = "human") -> checkpoints.Checkpoint:
    return checkpoints.make(checkpoints.VERIFIED, (7, "sha256:h"), TS, actor, None, signer.sign)


def test_a_checkpoint_signed_by_any_key_holds_before_there_is_a_signers_file() -> None:
    stranger = keys.Signer("m", b"\7" * 32)
    assert attest.judge_checkpoint(checkpoint(stranger), ()) is None


def test_a_checkpoint_by_a_key_trusted_for_its_actor_holds() -> None:
    assert attest.judge_checkpoint(checkpoint(ALICE), TRUSTED) is None
    assert attest.judge_checkpoint(checkpoint(BOX, "claude-code:1"), TRUSTED) is None


def test_every_way_a_checkpoints_signature_fails_is_named() -> None:
    good = checkpoint(ALICE)
    moved = good._replace(seq=9)  # pointed elsewhere after signing
    assert attest.judge_checkpoint(good._replace(signer=None, sig=None), ()) == "it is not signed"
    assert "does not verify: it was forged" in (attest.judge_checkpoint(moved, ()) or "")
    stranger = checkpoint(keys.Signer("m", b"\7" * 32))
    assert "does not list" in (attest.judge_checkpoint(stranger, TRUSTED) or "")
    assert attest.judge_checkpoint(checkpoint(BOX), TRUSTED) == (
        "it is signed by box, whose key may not sign as human"
    )
    revoked = signers.parse(f"@revoked alice human {ALICE.public}\n".encode(), "f")
    assert attest.judge_checkpoint(good, revoked) == "it is signed by alice, whose key was revoked"


def test_an_events_signature_does_not_stand_for_a_checkpoints() -> None:
    event = next_event(None, TS, "human", "note", None, None, {}, ALICE.sign)
    assert event.signer is not None
    lifted = checkpoints.Checkpoint(
        "verified", 1, event.hash, TS, "human", None, event.signer, event.sig
    )
    assert attest.judge_checkpoint(lifted, ()) is not None
