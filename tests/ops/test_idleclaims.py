"""The watchdog's writes on both stores: a claim marked idle once (its holder told), marked
active only while marked, released for its holder with reason ``idle``; the mark read back
from the log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memkeeper import Memory
from memkeeper.ops import idleclaims


@pytest.fixture
def holder(memory: Memory) -> Iterator[Memory]:
    opened = Memory.open(memory.root, agent="agent-b")
    yield opened
    opened.close()


def test_a_mark_is_written_once_with_a_message_to_the_holder(
    memory: Memory, holder: Memory
) -> None:
    claim = holder.claim(["src/"], ttl=600)
    ws = memory.workspace
    first = idleclaims.mark_idle(ws, claim, 1200.0, claim.granted_at)
    assert first is not None
    assert (first.type, first.actor, first.data["id"], first.data["idle_s"]) == (
        "claim.idle", "memkeeper", claim.id, 1200.0,
    )  # fmt: skip
    assert idleclaims.mark_idle(ws, claim, 1300.0, claim.granted_at) is None  # marked already
    assert [(m.sender, m.kind, m.about) for m in holder.mail.inbox()] == [
        ("memkeeper", "idle", claim.id)
    ]
    assert list(idleclaims.idle_marks(ws, holder.claims())) == [claim.id]


def test_active_clears_the_mark_and_only_a_marked_claim_gets_it(
    memory: Memory, holder: Memory
) -> None:
    claim = holder.claim(["src/"], ttl=600)
    ws = memory.workspace
    assert idleclaims.mark_active(ws, claim, 5.0) is None
    idleclaims.mark_idle(ws, claim, 1200.0, claim.granted_at)
    back = idleclaims.mark_active(ws, claim, 5.0)
    assert back is not None
    assert back.type == "claim.active"
    assert idleclaims.idle_marks(ws, [claim]) == {}
    assert idleclaims.mark_idle(ws, claim, 1200.0, claim.granted_at) is not None  # a new spell


def test_an_idle_claim_is_released_for_its_holder_who_is_told(
    memory: Memory, holder: Memory
) -> None:
    claim = holder.claim(["src/"], ttl=600)
    released = idleclaims.release_idle(memory.workspace, claim.id, 600.0)
    assert released is not None
    assert released.id == claim.id
    assert holder.claims() == []
    ended = [e for e in memory.events() if e.type == "claim.released"]
    assert [(e.actor, e.data["reason"]) for e in ended] == [("agent-b", "idle")]
    told = holder.mail.inbox()
    assert [m.kind for m in told] == ["idle"]
    assert "was released" in told[0].text
    assert holder.claims.record(claim.id).state == "released"


def test_a_claim_no_longer_live_is_left_alone(memory: Memory, holder: Memory) -> None:
    claim = holder.claim(["src/"], ttl=600)
    holder.release(claim.id)
    assert idleclaims.release_idle(memory.workspace, claim.id, 600.0) is None
    assert holder.mail.inbox() == []
