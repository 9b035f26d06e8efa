"""A blocked claim asks and meets: ``--request-release`` sends each holder in the way one
release request, before a wait or after a refusal (which says so); with the policy's
``meetings.on_overlap`` a strict claim opens a meeting with each holder in its way, once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper.errors import Busy
from memkeeper.ops import blocked

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper import Memory
    from memkeeper.claims.decisions import Claim
    from tests.ops.conftest import Agents

ME, THEM = "claude-code:s1", "codex:t2"


def take(memory: Memory, targets: list[str], *, strict: bool = False, wait: float | None = None,
         ask: bool = True) -> Claim:  # fmt: skip
    return blocked.claim(
        memory.workspace, lambda: memory.claim(targets, strict=strict, wait=wait), targets,
        mode="write", strict=strict, wait=wait, request_release=ask,
    )  # fmt: skip


def test_a_refused_claim_asks_each_holder_once_and_says_so(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    held = them.claim(["docs/"])
    with pytest.raises(Busy) as busy:
        take(me, ["docs/a.md"])
    (asked,) = them.mail.inbox()
    assert (asked.kind, asked.about) == ("release-request", held.id)
    assert busy.value.to_json()["release_requested"] == [asked.id]
    with pytest.raises(Busy) as again:
        take(me, ["docs/a.md"])
    assert again.value.to_json()["release_requested"] == []
    assert len(them.mail.inbox()) == 1


def test_a_claim_that_will_wait_asks_before_it_waits(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    held = them.claim(["docs/"])
    seen: list[str] = []

    def waits() -> Claim:  # the claim as it starts waiting: the holder has been asked
        seen.extend(m.kind for m in them.mail.inbox())
        return held

    got = blocked.claim(
        me.workspace, waits, ["docs/"], mode="write", strict=False, wait=30, request_release=True
    )
    assert got == held
    assert seen == ["release-request"]


def test_without_the_option_nothing_is_asked(agents: Agents) -> None:
    me, them = agents(ME), agents(THEM)
    them.claim(["docs/"])
    with pytest.raises(Busy):
        take(me, ["docs/"], ask=False)
    assert them.mail.inbox() == []


def test_by_policy_a_strict_claim_blocked_opens_one_meeting(agents: Agents, sample: Path) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "meetings:\n  on_overlap: true\n  deadline: 300\n")
    me, them = agents(ME), agents(THEM)
    held = them.claim(["CLAUDE.md"])
    for _ in range(2):
        with pytest.raises(Busy) as busy:
            take(me, ["CLAUDE.md#build"], strict=True, ask=False)
    assert busy.value.to_json()["meetings"] == []  # the first opened it; not twice
    (m,) = me.meetings.list()
    assert (m.participants, m.targets, m.claims) == ((ME, THEM), ("CLAUDE.md",), (held.id,))
    assert m.deadline - m.opened_at == 300
    assert [x.kind for x in them.mail.inbox()] == ["meeting"]
