"""The policy's ``meetings:`` mapping: defaults without it, its two keys read, anything else
refused at its line and column with what to write."""

from __future__ import annotations

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.policy.parse import parse

BASE = b"version: 1\nfiles:\n  - {path: CLAUDE.md, class: section-owned}\n"


def test_without_it_meetings_are_off_with_a_quarter_hour_deadline() -> None:
    policy = parse(BASE, ".memkeeper.yaml")
    assert (policy.meet_on_overlap, policy.meeting_deadline) == (False, 900)
    assert (policy.meeting_keep_days, policy.meeting_keep) == (30, 1000)


def test_its_keys_are_read() -> None:
    policy = parse(BASE + b"meetings:\n  on_overlap: true\n  deadline: 60\n", "p")
    assert (policy.meet_on_overlap, policy.meeting_deadline) == (True, 60)
    kept = parse(BASE + b"meetings:\n  keep_days: 0\n  keep: 5\n", "p")
    assert (kept.meeting_keep_days, kept.meeting_keep) == (0, 5)


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (b"meetings: yes\n", "p:4:11", "`meetings` must be a mapping"),
        (b"meetings:\n  on_overlap: 1\n", "p:5:15", "on_overlap must be true or false"),
        (b"meetings:\n  deadline: -5\n", "p:5:13", "deadline must be a positive whole number"),
        (b"meetings:\n  deadlin: 5\n", "p:5:3", "deadlin"),
        (b"meetings:\n  keep_days: -1\n", "p:5:14", "keep_days must be a whole number of days"),
        (b"meetings:\n  keep: many\n", "p:5:9", "meetings.keep must be a whole number (0 or"),
    ],
)
def test_anything_else_is_refused_where_it_is(text: bytes, where: str, what: str) -> None:
    with pytest.raises(PolicyInvalid) as bad:
        parse(BASE + text, "p")
    assert bad.value.message.startswith(where)
    assert what in bad.value.message
