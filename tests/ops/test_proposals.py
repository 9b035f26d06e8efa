"""Proposals: list, show, apply (a compare-and-swap, closed in the same transaction), drop."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memkeeper import Conflict, Invalid, Memory

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.peer("git"),
]

REF = "CLAUDE.md#build"


def propose(memory: Memory) -> int:
    """Two overlapping changes of one section: the second, merged, becomes a proposal."""
    read = memory.read(REF)
    memory.patch(REF, read.content.replace("3.11", "3.12"), expect_rev=read.rev)
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, read.content.replace("3.11", "3.13"), expect_rev=read.rev, merge=True)
    proposal_id: int = caught.value.fields["proposal"]
    return proposal_id


def test_show_diffs_the_proposal_against_the_section_now(memory: Memory) -> None:
    proposal_id = propose(memory)
    shown = memory.proposal(proposal_id)
    assert shown["id"] == proposal_id
    assert shown["state"] == "open"
    assert shown["base_rev"] == 1
    assert "3.13" in shown["body"]
    assert shown["current"]["rev"] == 2
    assert "3.12" in shown["current"]["content"]
    assert "-- Python 3.12" in shown["diff"]
    assert "+- Python 3.13" in shown["diff"]


def test_apply_patches_the_body_and_closes_the_proposal(memory: Memory) -> None:
    proposal_id = propose(memory)
    proposal, result = memory.apply_proposal(proposal_id, expect_rev=2)
    assert result.rev == 3
    assert "3.13" in memory.read(REF).content
    assert (proposal.state, proposal.rev, proposal.closed_by) == ("applied", 3, memory.agent)
    types = [e.type for e in memory.events()[-2:]]
    assert types == ["section.patched", "proposal.applied"]
    assert memory.proposals() == []
    assert [p.state for p in memory.proposals(closed=True)] == ["applied"]


def test_apply_at_a_stale_rev_is_a_conflict_and_leaves_it_open(memory: Memory) -> None:
    proposal_id = propose(memory)
    with pytest.raises(Conflict):
        memory.apply_proposal(proposal_id, expect_rev=1)
    assert [p.id for p in memory.proposals()] == [proposal_id]


def test_a_closed_proposal_cannot_be_applied_or_dropped_again(memory: Memory, sample: Path) -> None:
    proposal_id = propose(memory)
    memory.drop_proposal(proposal_id)
    before = (sample / "CLAUDE.md").read_bytes()
    with pytest.raises(Invalid, match="was dropped by"):
        memory.apply_proposal(proposal_id, expect_rev=2)
    with pytest.raises(Invalid, match="was dropped by"):
        memory.drop_proposal(proposal_id)
    assert (sample / "CLAUDE.md").read_bytes() == before
    assert memory.events()[-1].type == "proposal.dropped"


def test_an_unknown_proposal_is_invalid(memory: Memory) -> None:
    with pytest.raises(Invalid, match="no proposal 9"):
        memory.proposal(9)
    propose(memory)
    with pytest.raises(Invalid, match="no proposal 9 — list them"):
        memory.apply_proposal(9, expect_rev=1)


def test_listing_where_there_is_no_state_creates_none(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path, agent="a")
    assert memory.proposals() == []
    assert not (tmp_path / ".memkeeper").exists()
