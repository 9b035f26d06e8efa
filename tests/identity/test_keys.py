"""Ed25519 keys and signatures, on bytes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.identity import keys

PRIVATE = bytes(range(32))
SIGNER = keys.Signer("alice", PRIVATE)
HASH = "sha256:" + "ab" * 32


def test_a_signature_over_a_hash_verifies_with_its_public_key() -> None:
    public, sig = SIGNER.sign(HASH)
    assert public == SIGNER.public
    assert public.startswith("ed25519:")
    assert keys.valid(public, HASH, sig)


@given(st.text(min_size=1, max_size=80))
def test_a_signature_holds_for_its_message_alone(other: str) -> None:
    public, sig = SIGNER.sign(HASH)
    assert keys.valid(public, other, sig) == (other == HASH)


def test_another_key_or_a_changed_signature_does_not_verify() -> None:
    public, sig = SIGNER.sign(HASH)
    other = keys.Signer("mallory", bytes(32)).public
    assert not keys.valid(other, HASH, sig)
    flipped = ("B" if sig[0] == "A" else "A") + sig[1:]
    assert not keys.valid(public, HASH, flipped)


@pytest.mark.parametrize("bad", ["", "AAAA", "not base64!", "ed25519", "x" * 200])
def test_malformed_parts_never_verify_and_never_raise(bad: str) -> None:
    public, sig = SIGNER.sign(HASH)
    assert not keys.valid(bad, HASH, sig)
    assert not keys.valid(public, HASH, bad)


def test_signing_is_deterministic() -> None:
    assert SIGNER.sign(HASH) == keys.Signer("alice", PRIVATE).sign(HASH)


def test_a_private_key_file_round_trips_and_a_bad_one_is_named() -> None:
    data = keys.private_file("alice", PRIVATE)
    assert keys.read_private_file(data, "k") == ("alice", PRIVATE)
    with pytest.raises(keys.BadKey, match="k is not a memkeeper private key"):
        keys.read_private_file(b"-----BEGIN OPENSSH PRIVATE KEY-----\n", "k")
    with pytest.raises(keys.BadKey, match="not 32 bytes"):
        keys.read_private_file(data.replace(b"key: ", b"key: AA"), "k")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ssh-ed25519 AAAA", "must start with"),
        ("ed25519:!!", "not base64"),
        ("ed25519:AAAA", "3 bytes"),
    ],
)
def test_a_public_key_that_is_not_one_says_why(text: str, says: str) -> None:
    with pytest.raises(keys.BadKey, match=says):
        keys.public_key(text)


def test_new_keys_differ() -> None:
    assert keys.new_private() != keys.new_private()
    assert len(keys.new_private()) == 32
