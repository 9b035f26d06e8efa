"""The bounds on what callers hand memkeeper: numbers the stores can keep, text without NUL
and of a sane length, bodies a store can carry."""

from __future__ import annotations

import pytest

from memkeeper.errors import Invalid
from memkeeper.limits import MAX_BODY_BYTES, MAX_INT, body, text, whole


@pytest.mark.parametrize("value", [0, 1, MAX_INT])
def test_a_whole_number_the_stores_keep_passes(value: int) -> None:
    assert whole(value, "--since") == value


@pytest.mark.parametrize("value", [-1, MAX_INT + 1, 10**30])
def test_a_number_past_64_bits_or_below_zero_is_invalid_naming_the_field(value: int) -> None:
    with pytest.raises(Invalid, match=r"^--since must be a whole number from 0 to \d+, not"):
        whole(value, "--since")


def test_a_signed_number_may_be_negative_down_to_the_bound() -> None:
    assert whole(-MAX_INT, "priority", signed=True) == -MAX_INT
    with pytest.raises(Invalid, match="priority"):
        whole(-MAX_INT - 1, "priority", signed=True)


def test_text_with_a_nul_or_past_its_length_is_invalid() -> None:
    assert text("ok", "objective", limit=2) == "ok"
    with pytest.raises(Invalid, match="objective contains a NUL character"):
        text("a\x00b", "objective", limit=10)
    with pytest.raises(Invalid, match="objective is 3 characters long; at most 2 are kept"):
        text("abc", "objective", limit=2)


def test_a_body_past_the_bound_is_invalid_and_one_at_it_passes() -> None:
    assert body(b"x" * MAX_BODY_BYTES, "the body") == b"x" * MAX_BODY_BYTES
    with pytest.raises(Invalid, match="the body is 1,048,577 bytes"):
        body(b"x" * (MAX_BODY_BYTES + 1), "the body")
