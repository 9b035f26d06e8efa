"""The records of coordination: a reconciliation's state, a claim's and a proposal's JSON —
immutable records like the others, as cheap to import."""

from __future__ import annotations

import json

import pytest

from memkeeper.coordination import ClaimView, Proposal, Reconciliation
from memkeeper.records import Record

TS = "2026-01-01T00:00:00.000Z"


def reconciliation(**changes: object) -> Reconciliation:
    opened = Reconciliation(
        3, "memory/status.md", "notes", "mine\n", "theirs\n", "human", TS, None, None, None
    )
    return opened._replace(**changes)


def proposal(**changes: object) -> Proposal:
    opened = Proposal(
        5, "CLAUDE.md", "a/build", 2, b"- body\n", "agent-a", TS, "open", None, None, None
    )
    return opened._replace(**changes)


def test_a_reconciliation_is_open_until_resolved() -> None:
    opened = reconciliation()
    assert (opened.state, opened.status) == ("open", "open")
    closed = opened._replace(resolution="keep-human", resolved_by="human", resolved_at=TS)
    assert (closed.state, closed.status) == ("resolved", "resolved")


def test_a_reconciliation_in_json_carries_its_state() -> None:
    out = reconciliation().to_json()
    assert out["state"] == "open"
    assert (out["id"], out["path"], out["region"], out["resolution"]) == (
        3,
        "memory/status.md",
        "notes",
        None,
    )
    assert json.loads(json.dumps(out)) == out


def test_a_claim_view_has_defaults_and_lists_its_targets_in_json() -> None:
    claim = ClaimView("c1", 7, "agent-a", "exclusive", ("CLAUDE.md#a/build",))
    assert (claim.priority, claim.strict, claim.expires_at, claim.objective) == (0, False, 0.0, "")
    out = claim.to_json()
    assert out["targets"] == ["CLAUDE.md#a/build"]
    assert json.loads(json.dumps(out)) == out


def test_a_proposal_names_its_section_and_leaves_its_body_out_of_json_unless_asked() -> None:
    opened = proposal()
    assert (opened.ref, opened.text) == ("CLAUDE.md#a/build", "- body\n")
    brief = opened.to_json()
    assert "body" not in brief
    assert brief["ref"] == "CLAUDE.md#a/build"
    assert opened.to_json(body=True)["body"] == "- body\n"
    assert proposal(body=b"\xff").text == "\ufffd"


@pytest.mark.parametrize(
    "record",
    [reconciliation(), ClaimView("c1", 7, "a", "shared", ("x",)), proposal()],
    ids=lambda r: type(r).__name__,
)
def test_each_is_an_immutable_record(record: Record) -> None:
    assert isinstance(record, Record)
    assert record == record._replace()
    with pytest.raises(AttributeError, match="immutable"):
        record.id = 0
