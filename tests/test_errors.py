"""One exception root, one exit code per kind, and a JSON payload built from each error's fields."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import (
    Busy,
    Conflict,
    EnvironmentFailure,
    Failed,
    Invalid,
    MemkeeperError,
    PolicyInvalid,
    Refused,
)
from memkeeper.records import SectionText, Violation

CURRENT = SectionText("CLAUDE.md", "build", "## Build\n", "make\n", 4, "sha256:b", 9, "sha256:f")
VIOLATION = Violation("CLAUDE.md", 3, "structure", "a heading moved", "put it back")


def stale(**extra: Any) -> Conflict:
    return Conflict(
        "stale",
        reason="stale_revision",
        expected={"rev": 3},
        current=CURRENT,
        recover="re-read",
        **extra,
    )


def every_kind() -> list[MemkeeperError]:
    return [
        MemkeeperError("boom"),
        EnvironmentFailure("disk full", path="/x"),
        Invalid("bad input"),
        PolicyInvalid(".memkeeper.yaml", 2, 5, "unknown key 'x'", "remove it"),
        stale(),
        Refused("no", reason="owner"),
        Busy("busy", reason="held", holders=[{"agent": "a"}]),
        Failed("found 1", violations=[VIOLATION]),
    ]


@pytest.mark.parametrize(
    ("kind", "code", "status"),
    [
        (MemkeeperError, 1, "error"),
        (EnvironmentFailure, 1, "error"),
        (Invalid, 2, "invalid"),
        (PolicyInvalid, 2, "invalid"),
        (Conflict, 3, "conflict"),
        (Refused, 4, "refused"),
        (Busy, 5, "busy"),
        (Failed, 6, "failed"),
    ],
)
def test_each_kind_has_its_contract_exit_code_and_status(
    kind: type[MemkeeperError], code: int, status: str
) -> None:
    assert (kind.exit_code, kind.status) == (code, status)


def test_every_error_is_a_memkeeper_error_and_an_exception() -> None:
    for error in every_kind():
        assert isinstance(error, MemkeeperError)
        assert isinstance(error, Exception)
    assert issubclass(PolicyInvalid, Invalid)


def test_an_errors_fields_are_its_attributes_and_its_message_is_its_text() -> None:
    error = Invalid("x.md: no section 'y' — run `memkeeper sections x.md`", path="x.md", ref="y")
    assert str(error) == error.message == "x.md: no section 'y' — run `memkeeper sections x.md`"
    assert error.fields == {"path": "x.md", "ref": "y"}
    assert (getattr(error, "path"), getattr(error, "ref")) == ("x.md", "y")  # noqa: B009


def test_the_json_payload_is_status_message_and_fields() -> None:
    error = Invalid("bad", path="x.md", line=3)
    assert error.to_json() == {"status": "invalid", "message": "bad", "path": "x.md", "line": 3}


def test_records_in_the_payload_are_shown_by_their_json_form() -> None:
    payload = Failed("found 1", violations=(VIOLATION,)).to_json()
    assert payload["violations"] == [VIOLATION.to_json()]
    conflict = Conflict(
        "stale", reason="stale_file_hash", expected={}, current=CURRENT, recover="re-read"
    )
    assert conflict.to_json()["current"] == CURRENT.to_json()


def test_nested_lists_of_records_and_tuples_become_json_lists() -> None:
    error = Invalid("x", groups=[(VIOLATION, 1), ()], names=("a", "b"))
    assert error.to_json()["groups"] == [[VIOLATION.to_json(), 1], []]
    assert error.to_json()["names"] == ["a", "b"]


@pytest.mark.parametrize("error", every_kind(), ids=lambda e: type(e).__name__)
def test_every_payload_is_json_text(error: MemkeeperError) -> None:
    payload = json.loads(json.dumps(error.to_json()))
    assert payload["status"] == error.status
    assert payload["message"] == error.message


def test_a_policy_mistake_reads_path_line_column_problem_and_fix() -> None:
    error = PolicyInvalid("sub/.memkeeper.yaml", 4, 12, "unknown class 'x'", "use one of private")
    assert error.message == "sub/.memkeeper.yaml:4:12: unknown class 'x' — use one of private"
    assert (error.path, error.line, error.column) == ("sub/.memkeeper.yaml", 4, 12)
    assert (error.problem, error.fix) == ("unknown class 'x'", "use one of private")
    assert error.fields == {"path": "sub/.memkeeper.yaml", "line": 4, "column": 12}


def test_a_conflict_carries_what_is_there_now_and_how_to_recover() -> None:
    error = stale()
    assert error.current is CURRENT
    assert (error.reason, error.expected, error.recover) == (
        "stale_revision",
        {"rev": 3},
        "re-read",
    )
    assert error.retryable is True
    assert error.to_json()["retryable"] is True
    assert stale(retryable=False).retryable is False


def test_a_conflict_cannot_be_raised_without_current_and_recover() -> None:
    incomplete: dict[str, Any] = {"reason": "stale_revision", "expected": {}}
    with pytest.raises(TypeError):
        Conflict("stale", **incomplete)
    with pytest.raises(TypeError):
        Conflict("stale", **incomplete, current=CURRENT)


def test_a_refusal_needs_its_reason_and_names_no_holders_by_default() -> None:
    error = Refused("owned by human", reason="owner", path="CLAUDE.md")
    assert error.reason == "owner"
    assert error.holders == ()
    assert error.to_json() == {
        "status": "refused",
        "message": "owned by human",
        "reason": "owner",
        "path": "CLAUDE.md",
    }
    nothing: dict[str, Any] = {}
    with pytest.raises(TypeError):
        Refused("no reason", **nothing)


def test_a_busy_error_always_lists_its_holders() -> None:
    error = Busy("src/ is busy", reason="held", holders=[{"agent": "a", "id": "c1"}], id="r1")
    assert error.to_json()["holders"] == [{"agent": "a", "id": "c1"}]
    assert error.to_json()["id"] == "r1"
    only_reason: dict[str, Any] = {"reason": "held"}
    with pytest.raises(TypeError):
        Busy("busy", **only_reason)


def test_invalid_has_no_candidates_unless_given() -> None:
    assert Invalid("x").candidates == ()
    assert Invalid("x", candidates=["a/b"]).candidates == ["a/b"]
    assert MemkeeperError("x").reason is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), json_values, max_size=4))
def test_any_json_fields_come_back_from_the_payload_unchanged(fields: dict[str, Any]) -> None:
    fields = {k: v for k, v in fields.items() if k not in ("message", "status", "fields")}
    payload = json.loads(json.dumps(Invalid("m", **fields).to_json()))
    assert payload == {"status": "invalid", "message": "m", **fields}
