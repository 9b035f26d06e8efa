"""The policy's ``events:`` mapping: without it nothing is compacted; its two keys read;
anything else refused at its line and column with what to write."""

from __future__ import annotations

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.policy.parse import parse

BASE = b"version: 1\nfiles:\n  - {path: CLAUDE.md, class: section-owned}\n"


def test_without_it_every_event_is_kept() -> None:
    policy = parse(BASE, ".memkeeper.yaml")
    assert (policy.event_keep_days, policy.event_keep) == (None, None)


def test_its_keys_are_read_each_alone_or_both() -> None:
    days = parse(BASE + b"events:\n  keep_days: 90\n", "p")
    assert (days.event_keep_days, days.event_keep) == (90, None)
    count = parse(BASE + b"events: {keep: 1000}\n", "p")
    assert (count.event_keep_days, count.event_keep) == (None, 1000)
    both = parse(BASE + b"events:\n  keep_days: 1\n  keep: 1\n", "p")
    assert (both.event_keep_days, both.event_keep) == (1, 1)
    assert type(both.event_keep) is int


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (b"events: 90\n", "p:4:9", "`events` must be a mapping"),
        (b"events:\n  keep_days: 0\n", "p:5:14", "events.keep_days must be a whole number of days"),
        (b"events:\n  keep: -1\n", "p:5:9", "events.keep must be a whole number (1 or more)"),
        (b"events:\n  keep: true\n", "p:5:9", "not true"),
        (b"events:\n  keep: 1.5\n", "p:5:9", "not 1.5"),
        (b"events:\n  keep_day: 5\n", "p:5:3", "keep_day"),
    ],
)
def test_anything_else_is_refused_where_it_is(text: bytes, where: str, what: str) -> None:
    with pytest.raises(PolicyInvalid) as bad:
        parse(BASE + text, "p")
    assert bad.value.message.startswith(where)
    assert what in bad.value.message
