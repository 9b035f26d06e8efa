"""Evidence: what memkeeper verified apart from what the caller reported, and the bounds."""

from __future__ import annotations

import pytest

from memkeeper.claims.evidence import (
    MAX_REPORTED_BYTES,
    Check,
    Evidence,
    MemoryRev,
    bounded_changed,
    reported_text,
    tail,
)
from memkeeper.errors import Invalid


def test_a_tail_keeps_the_last_bytes_and_marks_the_cut() -> None:
    assert tail(b"short") == "short"
    assert tail(b"x" * 10 + b"end", limit=3) == "[…]end"


def test_a_check_passes_only_on_exit_zero_in_time() -> None:
    assert Check("true", 0, 0.1, "").passed
    assert not Check("false", 1, 0.1, "").passed
    assert not Check("sleep", None, 5.0, "", timed_out=True).passed


def test_reported_evidence_is_labelled_self_reported_and_round_trips() -> None:
    evidence = Evidence(
        "h", "b", ("a.py",), 1, " 1 file changed", (MemoryRev("CLAUDE.md", "build", 3, 7, True),),
        (Check("make test", 0, 1.5, "ok"),), "2026-12-06T00:00:00Z", '{"tests": "passed"}',
    )  # fmt: skip
    shown = evidence.to_json()
    assert shown["reported"] == {
        "self_reported": True, "verified": False, "content": '{"tests": "passed"}'
    }  # fmt: skip
    assert shown["verified"]["checks"][0]["passed"] is True
    assert Evidence.from_json(shown) == evidence


def test_the_changed_list_is_bounded_but_counted() -> None:
    shown, count = bounded_changed([f"f{n}" for n in range(600)])
    assert len(shown) == 500
    assert count == 600


def test_a_reported_file_too_big_or_not_text_is_refused() -> None:
    with pytest.raises(Invalid, match="at most"):
        reported_text(b"x" * (MAX_REPORTED_BYTES + 1), "e.json")
    with pytest.raises(Invalid, match="not UTF-8"):
        reported_text(b"\xff", "e.json")
