"""A joint claim counts as its participants' own, and only for writes another identity's
claim touches (else the meetings are not read at all)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.ops import meetings
from memkeeper.ops.jointclaims import as_seen_by, joint_claims, shared
from memkeeper.ops.meetings import How

if TYPE_CHECKING:
    from tests.ops.conftest import Agents

A, B = "claude-code:s1", "codex:t2"


def test_a_joint_claim_is_each_participants_own(agents: Agents) -> None:
    a, b, c = agents(A), agents(B), agents("third")
    held = a.claim(["CLAUDE.md"])
    claims = b.claims()
    assert as_seen_by(b.workspace, claims, "docs/x.md") is claims  # nothing read
    assert as_seen_by(b.workspace, claims, "CLAUDE.md#x")[0].agent == A  # not joint yet
    meetings.open_meeting(b.workspace, [A], ["CLAUDE.md"])
    meetings.resolve(agents("human").workspace, 1, 1, how=How("join"))
    assert joint_claims(b.workspace) == {held.id: (B, A)}
    assert as_seen_by(b.workspace, b.claims(), "CLAUDE.md#x")[0].agent == B
    assert as_seen_by(c.workspace, c.claims(), "CLAUDE.md#x")[0].agent == A
    assert [c.agent for c in shared(b.workspace, c.claims())] == [B]  # the gate's view
    assert [c.agent for c in shared(c.workspace, c.claims())] == [A]
