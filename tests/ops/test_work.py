"""Work items as operations: ``next`` hands out the highest-priority ready item whose paths no
other agent's live claim covers, granting that claim with the item in one transaction; an
item whose claim ends goes back to the pool at the next operation (``work.returned``), and
the worker whose claim ended is refused; ``done`` completes the claim with evidence, ``fail``
and ``return`` release it; waiters are woken by the change that lets them in."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from memkeeper.claims.evidence import Check
from memkeeper.errors import Busy, Failed, Invalid, Refused
from memkeeper.fs import checks

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper import Memory
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents

A, B = "w1", "w2"


@pytest.fixture(autouse=True)
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--verify`` commands: ``true`` passes, anything else fails (no process is run)."""

    def fake(command: str, cwd: str, timeout: float) -> Check:
        return Check(command, 0 if command == "true" else 1, 0.1, "")

    monkeypatch.setattr(checks, "run_check", fake)


def work_events(memory: Memory) -> list[tuple[str, int, str]]:
    return [(e.type, e.data["id"], e.actor) for e in memory.events() if e.type.startswith("work.")]


def test_next_grants_the_items_claim_and_marks_it_claimed_in_one_step(agents: Agents) -> None:
    a = agents(A)
    a.work.add("Fix the build", paths=["src/"], priority=1)
    item, claim = a.work.next(ttl=60)
    assert (item.id, item.state, item.claim, item.agent) == (1, "claimed", claim.id, A)
    assert (claim.targets, claim.objective, claim.agent) == (("src/",), "Fix the build", A)
    assert [c.id for c in a.claims()] == [claim.id]
    types = [e.type for e in a.events() if e.type.startswith(("claim.", "work."))]
    assert types == ["work.added", "claim.granted", "work.claimed"]


def test_another_agent_gets_the_next_item_whose_paths_are_free(agents: Agents) -> None:
    a, b = agents(A), agents(B)
    a.work.add("one", paths=["src/"])
    a.work.add("two", paths=["src/a.py"], priority=5)
    a.work.add("three", paths=["docs/"])
    assert a.work.next()[0].id == 2  # highest priority first
    assert b.work.next()[0].id == 3  # 1 overlaps a's claim on src/a.py
    with pytest.raises(Busy, match="none of the 1 ready work items can be claimed") as busy:
        b.work.next()
    assert (busy.value.reason, busy.value.exit_code, busy.value.fields["claimed"]) == (
        "held", 5, 2,
    )  # fmt: skip
    assert [h["agent"] for h in busy.value.holders] == [A]


def test_an_item_waits_until_every_item_it_comes_after_is_done(agents: Agents) -> None:
    a = agents(A)
    a.work.add("base", paths=["a"])
    a.work.add("on top", paths=["b"], after=[1], priority=9)
    assert a.work.next()[0].id == 1
    with pytest.raises(Busy, match="no work item is ready: 1 open wait") as busy:
        a.work.next()
    assert busy.value.reason == "queued"
    a.work.done(1)
    assert [i.id for i in a.work.list(ready=True)] == [2]
    assert a.work.next()[0].id == 2


def test_an_expired_claim_returns_its_item_and_its_late_done_is_refused(
    agents: Agents, clock: FakeClock
) -> None:
    a, b = agents(A), agents(B)
    a.work.add("slow", paths=["src/"])
    _, first = a.work.next(ttl=30)
    clock.advance(31)
    shown = b.work.show(1)  # any work operation settles: the item is back
    assert (shown.state, shown.reason, shown.returns, shown.claim) == (
        "open",
        "expired",
        1,
        first.id,
    )
    with pytest.raises(Invalid, match="went back to the pool") as own:
        a.work.done(1, claim=first.id)
    assert (own.value.reason, own.value.exit_code) == ("expired", 2)
    _, second = b.work.next()
    with pytest.raises(Refused, match=f"claimed by {B}") as theirs:
        a.work.done(1)
    assert theirs.value.exit_code == 4
    b.work.done(1, claim=second.id)
    with pytest.raises(Refused, match=f"done by {B}"):
        a.work.done(1, claim=first.id)
    assert work_events(a) == [
        ("work.added", 1, A), ("work.claimed", 1, A), ("work.returned", 1, A),
        ("work.claimed", 1, B), ("work.done", 1, B),
    ]  # fmt: skip


def test_done_completes_the_claim_with_evidence_fail_and_return_release_it(
    agents: Agents,
) -> None:
    a = agents(A)
    for title in ("done", "failed", "returned"):
        a.work.add(title, paths=[title])
    claims = [a.work.next()[1].id for _ in range(3)]
    assert a.work.done(1, ["true"]).state == "done"
    assert a.work.fail(2, "the tests cannot pass").reason == "the tests cannot pass"
    back = a.work.give_back(3)
    assert (back.state, back.returns) == ("open", 1)
    states = [a.claims.record(c).state for c in claims]
    assert states == ["completed", "released", "released"]
    record = a.claims.record(claims[0])
    assert record.evidence is not None
    assert record.evidence.checks[0].command == "true"
    assert [i.state for i in a.work.list()] == ["done", "failed", "open"]


def test_a_failing_verify_keeps_the_item_claimed(agents: Agents) -> None:
    a = agents(A)
    a.work.add("x", paths=["x"])
    a.work.next()
    with pytest.raises(Failed, match="it stays claimed by you"):
        a.work.done(1, ["false"])
    assert a.work.show(1).state == "claimed"


def test_a_claim_completed_directly_makes_its_item_done(agents: Agents) -> None:
    a = agents(A)
    a.work.add("x", paths=["x"])
    _, claim = a.work.next()
    a.claims.complete(claim.id)
    assert a.work.show(1).state == "done"
    assert work_events(a)[-1] == ("work.done", 1, A)


def test_bad_input_changes_nothing(agents: Agents) -> None:
    a = agents(A)
    a.work.add("x")
    before = len(a.events())
    for bad in ({"after": [5]}, {"paths": ["/abs"]}, {"priority": 2**64}):
        with pytest.raises(Invalid):
            a.work.add("y", **bad)
    with pytest.raises(Invalid, match="needs a title"):
        a.work.add("")
    assert [i.id for i in a.work.list()] == [1]
    assert len(a.events()) == before
    with pytest.raises(Invalid, match="no work item 9"):
        a.work.show(9)


def test_a_waiting_next_is_woken_by_the_done_that_makes_an_item_ready(agents: Agents) -> None:
    a, b = agents(A), agents(B)
    a.work.add("first", paths=["a"])
    a.work.add("second", paths=["b"], after=[1])
    a.work.next()
    got: list[int] = []
    waiter = threading.Thread(target=lambda: got.append(b.work.next(wait=30)[0].id))
    waiter.start()
    a.work.done(1)
    waiter.join(10)
    assert got == [2]


def test_wait_returns_once_the_item_is_done(agents: Agents) -> None:
    a, b = agents(A), agents(B)
    a.work.add("first", paths=["a"])
    a.work.next()
    ended: list[str] = []
    waiter = threading.Thread(target=lambda: ended.append(b.work.wait(1, timeout=30).state))
    waiter.start()
    a.work.fail(1, "no")
    waiter.join(10)
    assert ended == ["failed"]
    a.work.add("second")
    with pytest.raises(Busy, match="still open after 0") as late:
        a.work.wait(2, timeout=0)
    assert late.value.reason == "timeout"


def test_a_status_page_renders_who_works_on_what_and_the_ready_list(
    agents: Agents, sample: Path, clock: FakeClock
) -> None:
    page = sample / "memory" / "status.md"
    region = "## Work\n\n<!-- memkeeper:generated source=work -->\n<!-- memkeeper:end -->\n"
    page.write_text(page.read_text() + "\n" + region)
    a = agents(A)
    a.work.add("Fix the build", paths=["src/"])
    a.work.add("Write docs", paths=["docs/"], priority=3)
    a.work.next(ttl=30)
    a.regen("memory/status.md")
    rows = [line for line in page.read_text().splitlines() if line.startswith("| ")]
    assert rows[-2:] == [
        "| 2 | Write docs | docs/ | 3 | w1 |", "| 1 | Fix the build | src/ | 0 | ready |",
    ]  # fmt: skip
    clock.advance(31)  # its claim expired: the page shows the item back in the pool
    a.regen("memory/status.md")
    assert "| 2 | Write docs | docs/ | 3 | ready |" in page.read_text()


def test_next_reads_the_items_not_done_not_every_one_done_before(
    agents: Agents, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.work import items

    a = agents(A)
    for n in range(20):
        a.work.add(f"old {n}", paths=[f"old/{n}"])
        a.work.done(a.work.next()[0].id)
    a.work.add("new", paths=["new"], after=[20])
    decoded: list[str | bytes] = []
    real = items.decode

    def counted(raw: str | bytes) -> items.Item:
        decoded.append(raw)
        return real(raw)

    monkeypatch.setattr(items, "decode", counted)
    assert a.work.next()[0].title == "new"
    assert len(decoded) == 1  # the new item: the one it comes after is done
