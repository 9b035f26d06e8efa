"""How the policy's errors name a value: the one wording every key parser uses."""

from __future__ import annotations

import pytest
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from memkeeper.policy.values import show


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("high", "'high'"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (CommentedMap(), "a mapping"),
        ({"a": 1}, "a mapping"),
        (CommentedSeq(), "a list"),
        ([1], "a list"),
        (0.3, "0.3"),
        (-5, "-5"),
    ],
)
def test_a_value_is_named_as_the_user_wrote_it(value: object, named: str) -> None:
    assert show(value) == named
