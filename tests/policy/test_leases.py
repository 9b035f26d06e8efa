"""``leases:`` in `.memkeeper.yaml`: four positive whole numbers of seconds, the defaults when
absent, ``default_ttl`` at most ``max_ttl``, and FILE:LINE:COL with what to write otherwise."""

from __future__ import annotations

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.policy.loader import parse_policy
from memkeeper.policy.model import LEASE_DEFAULTS


def test_the_settings_default_and_are_read_as_written() -> None:
    policy = parse_policy(b"version: 1\n")
    assert (policy.default_ttl, policy.max_ttl) == (120, 3600)
    assert (policy.takeover_grace, policy.verify_timeout) == (60, 600)
    assert tuple(LEASE_DEFAULTS) == ("default_ttl", "max_ttl", "takeover_grace", "verify_timeout")
    written = parse_policy(
        b"version: 1\nleases:\n  default_ttl: 30\n  max_ttl: 90\n"
        b"  takeover_grace: 5\n  verify_timeout: 45\n"
    )
    assert (written.default_ttl, written.max_ttl) == (30, 90)
    assert (written.takeover_grace, written.verify_timeout) == (5, 45)


@pytest.mark.parametrize(
    ("text", "line", "column", "named"),
    [
        ("leases: 5\n", 2, 9, "`leases` must be a mapping, not 5"),
        ("leases:\n  takeover_grace: 0\n", 3, 19, "leases.takeover_grace must be a positive"),
        ("leases:\n  verify_timeout: 1.5\n", 3, 19, "not 1.5"),
        ("leases:\n  max_ttl: true\n", 3, 12, "not true"),
        ("leases:\n  default_ttl: 100\n  max_ttl: 50\n", 3, 16, "is greater than"),
        ("leases:\n  takeover: 5\n", 3, 3, "unknown key 'takeover' in leases"),
    ],
)
def test_each_mistake_is_named_where_it_is(text: str, line: int, column: int, named: str) -> None:
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(b"version: 1\n" + text.encode())
    message = str(caught.value)
    assert f":{line}:{column}:" in message, message
    assert named in message, message
