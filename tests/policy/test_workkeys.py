"""The policy's ``work:`` mapping: defaults without it, its two keys read, anything else
refused at its line and column with what to write."""

from __future__ import annotations

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.policy.parse import parse

BASE = b"version: 1\nfiles:\n  - {path: CLAUDE.md, class: section-owned}\n"


def test_without_it_ended_items_are_kept_30_days_and_1000_at_most() -> None:
    policy = parse(BASE, ".memkeeper.yaml")
    assert (policy.work_keep_days, policy.work_keep) == (30, 1000)


def test_its_keys_are_read() -> None:
    kept = parse(BASE + b"work:\n  keep_days: 0\n  keep: 5\n", "p")
    assert (kept.work_keep_days, kept.work_keep) == (0, 5)


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (b"work: yes\n", "p:4:7", "`work` must be a mapping"),
        (b"work:\n  keep_days: -1\n", "p:5:14", "work.keep_days must be a whole number of days"),
        (b"work:\n  keep: many\n", "p:5:9", "work.keep must be a whole number (0 or more)"),
        (b"work:\n  keep: true\n", "p:5:9", "work.keep must be a whole number"),
        (b"work:\n  kept: 5\n", "p:5:3", "kept"),
    ],
)
def test_anything_else_is_refused_where_it_is(text: bytes, where: str, what: str) -> None:
    with pytest.raises(PolicyInvalid) as bad:
        parse(BASE + text, "p")
    assert bad.value.message.startswith(where)
    assert what in bad.value.message
