"""Messages' rules: who can be written to, what a message may hold, who receives one, when a
claim is about to expire, and how a notice reads to the model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.decisions import Claim, make_request
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


kept_rows = st.lists(
    st.tuples(st.sampled_from(["a:1", "b:2", "all"]), st.integers(0, 9), st.booleans()),
    max_size=30,
)


@given(kept_rows, st.integers(0, 9), st.integers(0, 10))
def test_trimming_never_drops_what_its_recipient_was_not_given(
    rows: list[tuple[str, int, bool]], cut: int, keep: int
) -> None:
    kept = [
        (i + 1, to, f"2026-12-0{day}", was, "message", None)
        for i, (to, day, was) in enumerate(rows)
    ]
    drop = set(messages.to_trim(kept, f"2026-12-0{cut}", keep))
    for mid, to, sent_at, was, *_ in kept:
        told = was or to == messages.ALL
        if mid == len(kept):
            assert mid not in drop  # the newest: its id is never handed out again
        elif not told:
            assert mid not in drop  # never one not given yet
        elif sent_at < f"2026-12-0{cut}":
            assert mid in drop  # given, and older than the bound
    older = kept[:-1]
    left = [k for k in older if k[0] not in drop and (k[3] or k[1] == messages.ALL)]
    assert len(left) <= keep  # at most ``keep`` given ones stay
    newest = [k[0] for k in older if k[3] or k[1] == messages.ALL][-keep:] if keep else []
    assert {k[0] for k in left} <= set(newest)


def test_a_given_message_is_kept_a_week_and_to_all_too() -> None:
    rows = [(1, "a:1", "2026-11-01", True), (2, "a:1", "2026-11-01", False)]
    rows += [(3, "all", "2026-11-01", False), (4, "a:1", "2026-12-05", True)]
    rows += [(5, "b:2", "2026-11-01", True)]  # the newest: kept, whatever its age
    kept = [(*row, "message", None) for row in rows]
    assert messages.to_trim(kept, "2026-11-29", 1000) == [1, 3]
    assert messages.to_trim(kept, "2026-10-01", 1) == [1, 3]  # beyond the newest one given


def test_an_overlap_notice_not_yet_given_goes_once_its_request_waits_no_more() -> None:
    kept = [
        (1, "a:1", "2026-12-05", False, "overlap", "c1"),  # its request waits no more: withdrawn
        (2, "a:1", "2026-12-05", False, "overlap", "c2"),  # still waiting: kept
        (3, "a:1", "2026-12-05", True, "overlap", "c3"),  # given: the usual bound
        (4, "a:1", "2026-12-05", False, "message", "c4"),  # not a notice of a wait
        (5, "a:1", "2026-12-05", False, "overlap", "c5"),  # the newest: kept
    ]
    assert messages.to_trim(kept, "2026-11-29", 1000, waiting={"c2"}) == [1]
    assert messages.to_trim(kept, "2026-11-29", 1000) == []  # the queue not known: kept


def claim(cid: str, agent: str, target: str, mode: str = "write") -> Claim:
    return Claim(cid, 1, agent, mode, (target,), 0, False, 0.0, 99.0, "")  # type: ignore[arg-type]


def test_a_queued_request_is_told_once_to_each_holder_with_who_what_and_why() -> None:
    live = [
        claim("c1", "a:1", "CLAUDE.md#build"),
        claim("c2", "a:1", "CLAUDE.md#testing"),
        claim("c3", "b:2", "memory/decisions.md"),  # elsewhere
        claim("c4", "codex:x", "CLAUDE.md"),  # its own
        claim("c5", "c:3", "CLAUDE.md", mode="read"),
    ]
    request = make_request(
        "r9", "codex:x", ["CLAUDE.md"], strict=True, ttl=60, objective="fix build", arrival=1
    )
    assert messages.overlaps(request, live) == [
        ("a:1", "codex:x waits for CLAUDE.md (write, strict) for: fix build, behind your claim "
         "c1 on CLAUDE.md#build; c2 on CLAUDE.md#testing: release it when you are done "
         "(memkeeper release ID)"),
        ("c:3", "codex:x waits for CLAUDE.md (write, strict) for: fix build, behind your claim "
         "c5 on CLAUDE.md: release it when you are done (memkeeper release ID)"),
    ]  # fmt: skip
    reading = make_request("r1", "codex:x", ["CLAUDE.md"], mode="read", ttl=60, arrival=1)
    assert [to for to, _ in messages.overlaps(reading, live)] == ["a:1"]  # reads share
    assert messages.overlaps(request, []) == []
