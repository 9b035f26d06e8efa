"""Checkpoints of the event chain: what their signature covers, and their stored form, read
back exactly and refused when it is anything else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper import checkpoints
from memkeeper.checkpoints import Checkpoint, Unreadable
from memkeeper.identity import keys

KEY = keys.Signer("alice", bytes(range(32)))
TS = "2026-12-07T05:00:00.000Z"


def made(seq: int = 3, hash: str = "sha256:c", signers: str | None = None) -> Checkpoint:
    return checkpoints.make(checkpoints.VERIFIED, (seq, hash), TS, "human", signers, KEY.sign)


def test_a_checkpoint_is_signed_over_its_message_by_its_signer() -> None:
    cp = made()
    assert (cp.kind, cp.point, cp.signer) == ("verified", (3, "sha256:c"), KEY.public)
    assert cp.sig is not None
    assert keys.valid(KEY.public, checkpoints.message(cp), cp.sig)


@pytest.mark.parametrize(
    "change",
    [
        {"seq": 4},
        {"hash": "sha256:d"},
        {"kind": "compacted"},
        {"ts": "2026-12-07T05:00:00.001Z"},
        {"actor": "mallory"},
        {"signers": "sha256:s"},
    ],
)
def test_the_signature_covers_every_field_but_itself(change: dict[str, object]) -> None:
    cp = made()
    assert checkpoints.message(cp._replace(**change)) != checkpoints.message(cp)


def test_the_message_is_tagged_so_no_event_hash_can_be_it() -> None:
    assert checkpoints.message(made()).startswith("memkeeper checkpoint sha256:")


texts = st.text(max_size=20)


@given(
    kind=st.sampled_from(checkpoints.KINDS),
    seq=st.integers(min_value=1, max_value=2**53),
    hash=texts,
    ts=texts,
    actor=texts,
    signers=st.none() | texts,
    signer=st.none() | texts,
    sig=st.none() | texts,
)
def test_a_stored_checkpoint_reads_back_as_it_was(
    kind: str,
    seq: int,
    hash: str,
    ts: str,
    actor: str,
    signers: str | None,
    signer: str | None,
    sig: str | None,
) -> None:
    cp = Checkpoint(kind, seq, hash, ts, actor, signers, signer, sig)
    assert checkpoints.decode(checkpoints.encode(cp)) == cp
    assert checkpoints.decode(checkpoints.encode(cp).encode()) == cp


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "its fields are not"),
        ('{"kind": "verified"}', "its fields are not"),
        (checkpoints.encode(made()).replace('"verified"', '"other"'), "kind 'other'"),
        (checkpoints.encode(made()).replace('"seq":3', '"seq":0'), "seq 0 is not an event id"),
        (checkpoints.encode(made()).replace('"seq":3', '"seq":true'), "seq True"),
        (checkpoints.encode(made()).replace('"actor":"human"', '"actor":5'), "must be text"),
        (checkpoints.encode(made()).replace('"signers":null', '"signers":[]'), "must be text"),
    ],
)
def test_anything_else_is_unreadable_saying_why(text: str, what: str) -> None:
    with pytest.raises(Unreadable, match=what):
        checkpoints.decode(text)
