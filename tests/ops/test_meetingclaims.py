"""A resolution's changes to the claims, applied in one claims transaction: a narrowed claim
keeps its id, token and expiry; a grant gets a fresh token; a claim left with nothing is
released."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import Conflict
from memkeeper.meetings.effects import Effects, Grant, Narrow
from memkeeper.ops.meetingclaims import resolve_with

if TYPE_CHECKING:
    from tests.ops.conftest import Agents

A, B = "claude-code:s1", "codex:t2"


def test_narrow_grant_and_release_in_one_transaction(agents: Agents) -> None:
    a, b = agents(A), agents(B)
    kept = a.claim(["docs/", "src/"])
    gone = a.claim(["notes/"])
    committed = []
    fx = Effects((Narrow(kept.id, ("src/",)), Narrow(gone.id, ())), (Grant(B, ("docs/",), True),))
    resolve_with(a.workspace, lambda claims: (5, fx), lambda: committed.append(True))
    assert committed == [True]
    by_id = {c.id: c for c in b.claims()}
    narrowed = by_id[kept.id]
    assert (narrowed.targets, narrowed.token, narrowed.expires_at) == (
        ("src/",), kept.token, kept.expires_at,
    )  # fmt: skip
    (granted,) = [c for c in by_id.values() if c.agent == B]
    assert (granted.targets, granted.strict, granted.objective) == (("docs/",), True, "meeting 5")
    assert granted.token > gone.token
    assert gone.id not in by_id
    released = [e for e in a.events() if e.type == "claim.released"]
    assert [e.data["reason"] for e in released] == ["meeting"]


def test_a_narrowed_claims_record_moves_on_so_its_holders_old_rev_is_stale(
    agents: Agents,
) -> None:
    a = agents(A)
    kept = a.claim(["docs/", "src/"])
    fx = Effects((Narrow(kept.id, ("src/",)),), ())
    resolve_with(a.workspace, lambda claims: (7, fx), lambda: None)
    record = a.claims.record(kept.id)
    assert (record.rev, record.targets, record.state) == (2, ("src/",), "active")
    (narrowed,) = [e for e in a.events() if e.type == "claim.narrowed"]
    assert (narrowed.data["rev"], narrowed.data["meeting"]) == (2, 7)
    with pytest.raises(Conflict):
        a.claims.abandon(kept.id, "done with it", expect_rev=1)
    assert a.claims.abandon(kept.id, "done with it", expect_rev=2).state == "abandoned"
