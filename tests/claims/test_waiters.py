"""A waiter row: the queued request, its process and its fate, as an immutable record."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Request
from memkeeper.claims.waiters import WaiterRow

REQUEST = Request("r1", "agent-a", "write", ("src/",), 2, False, 60.0, "refactor", 7)


def waiter(**changes: object) -> WaiterRow:
    return WaiterRow(REQUEST, 4242, 1_700_000_060.0, "waiting", None)._replace(**changes)


def test_a_waiter_row_lists_its_fields_in_order() -> None:
    row = waiter()
    assert tuple(row) == (REQUEST, 4242, 1_700_000_060.0, "waiting", None)
    assert list(row._asdict()) == ["request", "pid", "deadline", "state", "reason"]
    assert (row.request, row.pid, row.state) == (REQUEST, 4242, "waiting")
    assert len(row) == 5


def test_settling_a_waiter_makes_a_new_row_and_leaves_the_old_one() -> None:
    row = waiter()
    aborted = row._replace(state="aborted", reason="deadlock")
    assert (aborted.state, aborted.reason) == ("aborted", "deadlock")
    assert (row.state, row.reason) == ("waiting", None)
    assert aborted.request is row.request


def test_a_waiter_row_cannot_be_changed_in_place() -> None:
    row = waiter()
    with pytest.raises(AttributeError, match="WaiterRow is immutable; use _replace"):
        row.state = "granted"
    assert row.state == "waiting"


def test_waiter_rows_are_equal_by_value() -> None:
    assert waiter() == waiter()
    assert waiter() != waiter(pid=1)
    assert waiter() != waiter(request=dataclasses.replace(REQUEST, arrival=8))
    assert waiter() != tuple(waiter())


def test_a_waiter_row_shows_its_request_in_its_repr() -> None:
    text = repr(waiter(state="granted"))
    assert text.startswith("WaiterRow(request=Request(id='r1'")
    assert "pid=4242" in text
    assert text.endswith("state='granted', reason=None)")


@given(
    pid=st.integers(min_value=1, max_value=2**22),
    deadline=st.floats(allow_nan=False, allow_infinity=False),
    state=st.sampled_from(["waiting", "granted", "aborted"]),
    reason=st.one_of(st.none(), st.sampled_from(["deadlock", "timeout", "abandoned"])),
)
def test_a_waiter_row_rebuilds_from_its_fields(
    pid: int, deadline: float, state: str, reason: str | None
) -> None:
    row = WaiterRow(REQUEST, pid, deadline, state, reason)
    assert WaiterRow(*row) == row
    assert WaiterRow(**row._asdict()) == row
    assert row._replace() == row
    assert row._replace(pid=pid + 1).pid == pid + 1
