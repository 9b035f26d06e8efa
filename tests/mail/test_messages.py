"""Messages' rules: who can be written to, what a message may hold, who receives one, when a
claim is about to expire, and how a notice reads to the model."""

from __future__ import annotations

import pytest

from memkeeper.claims.decisions import Claim
from memkeeper.coordination import Message
from memkeeper.errors import Invalid
from memkeeper.mail import messages

AT = "2026-12-06T12:00:00.000Z"


def msg(n: int, kind: str = "message", sender: str = "human", to: str = "a:1") -> Message:
    return Message(n, sender, to, kind, "c7" if kind == "release-request" else None, "text", AT)


def held(left: float, granted_for: float, now: float = 1000.0) -> Claim:
    expires = now + left
    granted = expires - granted_for
    return Claim("c7", 3, "a:1", "write", ("CLAUDE.md#build",), 0, False, granted, expires, "")


@pytest.mark.parametrize("to", ["", "  ", "two words", "a\x00b", "x" * 300, "tab\there"])
def test_a_recipient_is_one_identity_or_all(to: str) -> None:
    with pytest.raises(Invalid):
        messages.recipient(to)
    assert messages.recipient(" claude-code:7f3c ") == "claude-code:7f3c"
    assert messages.recipient("all") == "all"


def test_a_message_has_text_within_bounds_and_a_known_kind() -> None:
    for bad in ("", " \n", "x" * (messages.MAX_TEXT_CHARS + 1), "nul\x00"):
        with pytest.raises(Invalid):
            messages.text(bad)
    with pytest.raises(Invalid, match="unknown message kind 'gossip'"):
        messages.kind("gossip")
    assert messages.kind("handoff") == "handoff"


def test_all_reaches_everyone_but_its_sender() -> None:
    to_all = msg(1, sender="b:2", to="all")
    assert messages.addressed_to(to_all, "a:1")
    assert not messages.addressed_to(to_all, "b:2")
    assert messages.addressed_to(msg(2), "a:1")
    assert not messages.addressed_to(msg(2), "a:1/sub")


def test_a_claim_is_about_to_expire_in_its_last_quarter_and_last_five_minutes() -> None:
    now = 1000.0
    assert messages.expiring([held(29, 120)], now)[0][0] == "expiring:c7:1029.000"
    assert messages.expiring([held(31, 120)], now) == []  # more than a quarter of 120 s left
    assert messages.expiring([held(299, 3600)], now) != []
    assert messages.expiring([held(301, 3600)], now) == []  # at most five minutes before
    assert messages.expiring([held(-1, 120)], now) == []  # expired: nothing to renew
    said = messages.expiring([held(10, 120)], now)[0][1]
    assert said.startswith("your claim c7 on CLAUDE.md#build expires in 10 s: renew it")


def test_a_notice_says_each_message_and_how_to_answer_a_release_request() -> None:
    assert messages.notice([], []) == ""
    said = messages.notice([msg(4, "release-request"), msg(5)], ["your claim c9 expires"])
    assert said.splitlines()[:4] == [
        "memkeeper — for you:",
        "- [4] human asks you to release your claim about c7: text",
        "- [5] message from human: text",
        "- your claim c9 expires",
    ]
    assert "memkeeper answer N --release" in said
    assert "memkeeper answer N --reason '…' --eta SECONDS" in said


def test_an_answer_and_a_meeting_read_as_what_they_are() -> None:
    answer, meeting = msg(6, "release-answer"), msg(7, "meeting")
    said = messages.notice([answer._replace(about="c7"), meeting._replace(about="meeting 2")], [])
    assert "- [6] human answers your release request about c7: text" in said
    assert "- [7] meeting 2: text" in said
    assert "memkeeper meeting show ID" in said


def test_a_long_inbox_is_cut_with_the_count_of_the_rest() -> None:
    said = messages.notice([msg(n) for n in range(1, 26)], [])
    assert "- … and 5 more: memkeeper inbox" in said
    assert "[21]" not in said
