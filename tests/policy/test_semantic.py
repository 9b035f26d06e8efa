"""``semantic.threshold`` in `.memkeeper.yaml`: a number above 0 and at most 1, the default
when absent, and FILE:LINE:COL with what to write for anything else."""

from __future__ import annotations

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.policy.loader import parse_policy
from memkeeper.policy.model import SEMANTIC_THRESHOLD


def test_the_threshold_defaults_and_is_read_as_written() -> None:
    assert parse_policy(b"version: 1\n").semantic_threshold == SEMANTIC_THRESHOLD == 0.2
    assert parse_policy(b"version: 1\nsemantic: {}\n").semantic_threshold == 0.2
    written = b"version: 1\nsemantic:\n  threshold: 0.35\n"
    assert parse_policy(written).semantic_threshold == 0.35
    assert parse_policy(b"version: 1\nsemantic: {threshold: 1}\n").semantic_threshold == 1.0


@pytest.mark.parametrize(
    ("text", "line", "column", "named"),
    [
        ("semantic: 0.3\n", 2, 11, "`semantic` must be a mapping, not 0.3"),
        ("semantic:\n  threshold: 0\n", 3, 14, "at most 1, not 0"),
        ("semantic:\n  threshold: 1.5\n", 3, 14, "not 1.5"),
        ("semantic:\n  threshold: -0.2\n", 3, 14, "not -0.2"),
        ("semantic:\n  threshold: true\n", 3, 14, "not true"),
        ("semantic:\n  threshold: high\n", 3, 14, "not 'high'"),
        ("semantic:\n  treshold: 0.3\n", 3, 3, "unknown key 'treshold' in semantic"),
    ],
)
def test_a_bad_threshold_names_file_line_column_and_what_to_write(
    text: str, line: int, column: int, named: str
) -> None:
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(b"version: 1\n" + text.encode(), source="p.yaml")
    message = str(caught.value)
    assert message.startswith(f"p.yaml:{line}:{column}: "), message
    assert named in message
    assert " — " in message
    assert caught.value.exit_code == 2
