"""A claim's life through ``mem.claims`` against a real store, a fake clock and no sleeps:
records kept after the end, scope changes checked as new requests, completion refused by a
failing check, abandon, takeover after the grace period, suspend and resume — each a
revision of the record and an event, each refused on a stale ``expect_rev``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Busy, Invalid, Memory
from memkeeper.claims.evidence import Check
from memkeeper.claims.lifecycle import ClaimRecord
from memkeeper.errors import Conflict, Failed, Refused
from memkeeper.fs import wakeups
from tests.ops.conftest import kinds

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock


def test_a_released_claim_keeps_its_record_out_of_the_live_set(
    agents: Callable[[str], Memory],
) -> None:
    a = agents("a")
    claim = a.claims.take("src/api/", objective="retry", memory=["CLAUDE.md#build"])
    a.release(claim.id)
    record = a.claims.record(claim.id)
    assert (record.state, record.rev, record.objective) == ("released", 2, "retry")
    assert record.plan.memory == ("CLAUDE.md#inventory-service/build",)
    assert a.claims() == []
    assert [r.id for r in a.claims.records(["released"])] == [claim.id]


def test_a_scope_change_onto_another_agents_claim_is_busy_and_changes_nothing(
    agents: Callable[[str], Memory],
) -> None:
    a, b = agents("a"), agents("b")
    mine = a.claim("src/api/")
    b.claim("docs/")
    with pytest.raises(Busy):
        a.claims.scope(mine.id, add=["docs/guide.md"])
    assert a.claims.record(mine.id).rev == 1
    wider = a.claims.scope(mine.id, add=["src/db/"], remove=["src/api/"], expect_rev=1)
    assert (wider.targets, wider.rev) == (("src/db/",), 2)
    assert wider.token > mine.token
    assert kinds(a)[-1][0] == "claim.scoped"
    with pytest.raises(Conflict) as caught:
        a.claims.scope(mine.id, add=["src/x/"], expect_rev=1)
    assert caught.value.exit_code == 3


def test_a_failing_check_refuses_completion_and_the_claim_stays_active(
    agents: Callable[[str], Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.fs import checks

    def fake(command: str, cwd: str, timeout: float) -> Check:
        return Check(command, 0 if command == "ok" else 1, 0.5, "tail")

    monkeypatch.setattr(checks, "run_check", fake)
    a = agents("a")
    claim = a.claim("src/api/")
    with pytest.raises(Failed) as caught:
        a.claims.complete(claim.id, ["ok", "broken"])
    assert caught.value.exit_code == 6
    assert a.claims.record(claim.id).state == "active"
    assert a.claims() == [claim]
    done = a.claims.complete(claim.id, ["ok"], evidence="all green", expect_rev=1)
    assert (done.state, done.rev) == ("completed", 2)
    assert done.evidence is not None
    assert done.evidence.checks[0].passed
    assert done.evidence.to_json()["reported"]["self_reported"] is True
    assert a.claims() == []
    with pytest.raises(Invalid, match="final"):
        a.claims.abandon(claim.id, "late")


def test_only_the_holder_completes_or_abandons(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/api/")
    with pytest.raises(Refused):
        b.claims.abandon(claim.id, "not mine")


def test_a_takeover_waits_for_the_grace_period_and_names_its_predecessor(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/api/", ttl=30)
    gone = a.claims.abandon(claim.id, "blocked on the schema")
    assert (gone.state, gone.reason) == ("abandoned", "blocked on the schema")
    with pytest.raises(Invalid) as caught:
        b.claims.takeover(claim.id)
    assert caught.value.reason == "grace"
    clock.advance(61)
    new, old = b.claims.takeover(claim.id, expect_rev=2)
    assert (old.state, old.successor, new.agent) == ("taken-over", new.id, "b")
    assert new.token > claim.token
    assert b.claims.record(new.id).predecessor == claim.id
    with pytest.raises(Invalid, match="is taken-over"):
        b.claims.takeover(claim.id)


def test_an_expired_claim_can_be_taken_over_after_the_grace_period(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/api/", ttl=10)
    clock.advance(11)
    assert [r.state for r in b.claims.records()] == ["expired"]
    clock.advance(60)
    _, old = b.claims.takeover(claim.id)
    assert old.state == "taken-over"
    assert [e[0] for e in kinds(b)][-2:] == ["claim.granted", "claim.taken-over"]


def test_a_suspended_claim_frees_its_targets_and_resumes_as_a_new_request(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/api/")
    assert a.claims.suspend(claim.id).state == "suspended"
    other = b.claim("src/api/")
    with pytest.raises(Busy):
        a.claims.resume(claim.id)
    b.release(other.id)
    back = a.claims.resume(claim.id, expect_rev=2)
    assert back.token > other.token
    assert a.claims.record(claim.id).state == "active"


def test_the_evidence_lists_the_memory_revisions_the_holder_wrote(
    agents: Callable[[str], Memory],
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("CLAUDE.md#build")
    build = a.read("CLAUDE.md#build")
    fenced = a.patch(
        "CLAUDE.md#build", build.content + "- x\n", expect_rev=build.rev, claim=claim.id
    )
    events = a.events()
    assert events[-1].data["claim"] == claim.id
    other = b.read("CLAUDE.md#testing")
    b.patch("CLAUDE.md#testing", other.content + "- y\n", expect_rev=other.rev)  # not a's
    done = a.claims.complete(claim.id)
    assert done.evidence is not None
    (written,) = done.evidence.memory
    assert (written.path, written.section, written.rev, written.fenced) == (
        "CLAUDE.md", fenced.key, fenced.rev, True,
    )  # fmt: skip


def test_a_scope_change_may_queue_for_the_added_targets_and_merges_once_granted(
    agents: Callable[[str], Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = threading.Event()
    real_block = wakeups.Inbox.block

    def block(inbox: wakeups.Inbox, timeout: float) -> bool:
        queued.set()  # the waiter is in the queue, asleep on its FIFO
        return real_block(inbox, timeout)

    monkeypatch.setattr(wakeups.Inbox, "block", block)
    a, b = agents("a"), agents("b")
    mine = a.claim("src/api/")
    theirs = b.claim("docs/")
    outcome: list[object] = []

    def change() -> None:
        try:
            outcome.append(a.claims.scope(mine.id, add=["docs/guide.md"], wait=30))
        except Exception as exc:  # the test reports it below
            outcome.append(exc)

    waiter = threading.Thread(target=change, daemon=True)
    waiter.start()
    assert queued.wait(timeout=10), outcome
    assert a.claims.record(mine.id).rev == 1  # nothing changed while it waits
    b.release(theirs.id)
    waiter.join(timeout=10)
    (record,) = outcome
    assert isinstance(record, ClaimRecord), record
    assert (record.targets, record.rev) == (("src/api/", "docs/guide.md"), 2)
    assert record.token > theirs.token
    assert [c.id for c in a.claims()] == [mine.id]  # the queued part was merged, not kept
    scoped = [e for e in a.events() if e.type == "claim.scoped"][-1]
    assert scoped.data["queued_as"] != mine.id
