"""Wake-ups after an operation's commit (``ops.wakes``): a claim ended outside ``work`` wakes
a waiting ``work next`` at once, and a message posted inside another command's transaction (a
takeover's ``handoff``) wakes its recipient's ``inbox --wait`` — not at the waits' caps, made
a minute long here so that only a poke can end a wait early."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import pytest

from memkeeper.mail import waits
from memkeeper.ops import claimwaits
from memkeeper.ops.wakes import WORK, woken

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock
    from tests.ops.conftest import Agents

ME, THEM = "claude-code:s1", "codex:t2"
PROMPT_S = 0.5  # a poked waiter answers within this


@pytest.fixture(autouse=True)
def long_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waits, "WAKE_CAP_S", 60.0)
    monkeypatch.setattr(claimwaits, "WAKE_CAP_S", 60.0)


def test_what_an_event_wakes() -> None:
    assert woken("message.sent", {"to": ME, "kind": "handoff"}) == {("mail", ME)}
    for end in ("released", "completed", "abandoned", "expired"):
        assert woken(f"claim.{end}", {"id": "c1"}) == {("work", WORK)}
    assert woken("claim.granted", {"id": "c1"}) == set()
    assert woken("message.sent", {}) == set()  # no recipient: nobody to wake


def test_a_claim_released_outside_work_wakes_a_waiting_next_at_once(agents: Agents) -> None:
    a, b, waiter = agents(THEM), agents(THEM), agents(ME)
    a.work.add("the api", paths=["src/api/"])
    held = b.claim("src/api/", ttl=3000)  # not through work: work never hears of it
    got: list[tuple[int, float]] = []

    def take() -> None:
        item, _ = waiter.work.next(wait=30)
        got.append((item.id, time.monotonic()))

    thread = threading.Thread(target=take)
    thread.start()
    time.sleep(0.5)  # the waiter has looked, found the item held, and blocks
    assert got == []
    released = time.monotonic()
    b.release(held.id)
    thread.join(10)
    assert [item for item, _ in got] == [1]
    assert got[0][1] - released < PROMPT_S


def test_a_takeovers_handoff_wakes_the_takers_waiting_inbox_at_once(
    agents: Agents, clock: FakeClock
) -> None:
    them, taker, inbox = agents(THEM), agents(ME), agents(ME)
    claim = them.claim("src/api/", ttl=30)
    them.claims.abandon(claim.id, "blocked on the schema", message="start from the migration")
    inbox.mail.inbox()  # the store exists before the wait begins
    got: list[tuple[str, float]] = []

    def wait() -> None:
        got.extend((m.kind, time.monotonic()) for m in inbox.mail.wait(30))

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.5)
    assert got == []
    clock.advance(61)
    posted = time.monotonic()
    taker.claims.takeover(claim.id)
    thread.join(10)
    assert [kind for kind, _ in got] == ["handoff"]
    assert got[0][1] - posted < PROMPT_S
