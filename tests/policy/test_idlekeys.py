"""``leases.idle_after`` and ``leases.idle_release_after``: whole seconds, 0 or ``off`` for
never; defaults 1200 and off; anything else refused at its line and column."""

from __future__ import annotations

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.policy.parse import parse

BASE = b"version: 1\n"


def test_the_defaults_are_twenty_minutes_and_no_release() -> None:
    policy = parse(BASE, "p")
    assert (policy.idle_after, policy.idle_release_after) == (1200, 0)


@pytest.mark.parametrize(
    ("text", "idle", "release"),
    [
        (b"leases:\n  idle_after: 300\n  idle_release_after: 600\n", 300, 600),
        (b"leases:\n  idle_after: off\n", 0, 0),
        (b"leases:\n  idle_after: 0\n", 0, 0),
        (b"leases:\n  idle_after: false\n  idle_release_after: off\n", 0, 0),
        (b"leases:\n  default_ttl: 60\n", 1200, 0),
    ],
)
def test_its_keys_are_read(text: bytes, idle: int, release: int) -> None:
    policy = parse(BASE + text, "p")
    assert (policy.idle_after, policy.idle_release_after) == (idle, release)


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (b"leases:\n  idle_after: -1\n", "p:3:15", "leases.idle_after must be a whole number"),
        (b"leases:\n  idle_after: 1.5\n", "p:3:15", "not 1.5"),
        (b"leases:\n  idle_after: true\n", "p:3:15", "not true"),
        (b"leases:\n  idle_release_after: never\n", "p:3:23", "not 'never'"),
        (b"leases:\n  idle_afterr: 5\n", "p:3:3", "idle_afterr"),
    ],
)
def test_anything_else_is_refused_where_it_is(text: bytes, where: str, what: str) -> None:
    with pytest.raises(PolicyInvalid) as bad:
        parse(BASE + text, "p")
    assert bad.value.message.startswith(where)
    assert what in bad.value.message
    assert " — " in bad.value.message  # and what to write instead
