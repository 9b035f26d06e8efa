"""The tracked signers file: parsed, edited byte for byte, and asked who may sign as whom."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.identity import keys, signers

ALICE = keys.Signer("alice", bytes(range(32))).public
BOX = keys.Signer("box", bytes(32)).public
FILE = f"# who signs\nalice human {ALICE}  # Alice\n\nbox *:*,ci {BOX}\n".encode()


def test_each_line_is_a_signer_with_its_identities() -> None:
    alice, box = signers.parse(FILE, "f")
    assert (alice.name, alice.identities, alice.key, alice.line) == ("alice", ("human",), ALICE, 2)
    assert box.identities == ("*:*", "ci")
    assert not box.revoked


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"alice human\n", "f:1: expected NAME IDENTITIES KEY"),
        (b"alice human ssh-ed25519:AAAA\n", "f:1: 'ssh-ed25519:AAAA' is not a public key"),
        (f"a human {ALICE}\na x {BOX}\n".encode(), "f:2: signer 'a' is listed twice"),
    ],
)
def test_a_bad_line_is_named_with_its_number(text: bytes, says: str) -> None:
    with pytest.raises(Invalid, match=says):
        signers.parse(text, "f")


def test_who_may_sign_as_whom() -> None:
    found = signers.parse(FILE, "f")
    assert signers.standing(found, ALICE, "human") == ("trusted", "alice")
    assert signers.standing(found, ALICE, "claude-code:1") == ("not-allowed", "alice")
    assert signers.standing(found, BOX, "claude-code:1") == ("trusted", "box")
    assert signers.standing(found, BOX, "human") == ("not-allowed", "box")
    assert signers.standing(found, BOX, "external") == ("trusted", "box")  # what it noticed
    assert signers.standing(found, keys.Signer("m", b"\1" * 32).public, "human") == ("unknown", "")


def test_a_revoked_signer_is_named_and_no_longer_protects_its_names() -> None:
    found = signers.parse(signers.revoked(FILE, "alice"), "f")
    assert signers.standing(found, ALICE, "human") == ("revoked", "alice")
    assert signers.protected(found) == frozenset({"ci"})
    assert signers.protected(signers.parse(FILE, "f")) == frozenset({"human", "ci"})


def test_editing_keeps_every_other_byte() -> None:
    added = signers.with_signer(FILE, "carol", ("human",), keys.Signer("c", b"\2" * 32).public)
    assert added.startswith(FILE)
    revoked = signers.revoked(added, "box")
    assert revoked.replace(b"@revoked box", b"box") == added


def test_a_new_file_starts_with_a_header_and_a_file_without_a_last_newline_gets_one() -> None:
    assert signers.with_signer(b"", "alice", ("human",), ALICE).startswith(signers.HEADER)
    assert (
        signers.with_signer(b"# x", "alice", ("human",), ALICE)
        == f"# x\nalice human {ALICE}\n".encode()
    )


def test_a_name_or_key_listed_already_is_refused() -> None:
    with pytest.raises(Invalid, match="signer 'alice' is already listed"):
        signers.with_signer(FILE, "alice", ("human",), keys.Signer("z", b"\3" * 32).public)
    with pytest.raises(Invalid, match="already trusted as 'box'"):
        signers.with_signer(FILE, "box2", ("human",), BOX)
    with pytest.raises(Invalid, match="no trusted signer named 'carol'"):
        signers.revoked(FILE, "carol")


@pytest.mark.parametrize(
    ("policy", "required"),
    [
        (b"version: 1\nsignatures: required\n", True),
        (b"version: 1\nsignatures: 'required'  # all of us\n", True),
        (b"version: 1\nsignatures: optional\n", False),
        (b"version: 1\n# signatures: required\n", False),
        (b"", False),
    ],
)
def test_the_policys_signatures_line(policy: bytes, required: bool) -> None:
    assert signers.required_by(policy) is required


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, min_size=1))
def test_any_signers_added_parse_back(names: list[str]) -> None:
    data = b""
    for i, name in enumerate(names):
        data = signers.with_signer(
            data, name, ("human",), keys.Signer(name, bytes([i]) * 32).public
        )
    assert [s.name for s in signers.parse(data, "f")] == names
