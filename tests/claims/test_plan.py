"""A claim's plan: sizes checked, memory sections normalized, JSON round trip."""

from __future__ import annotations

import pytest

from memkeeper.claims.plan import Plan, make_plan
from memkeeper.errors import Invalid


def test_a_plan_keeps_what_it_announces_and_round_trips() -> None:
    plan = make_plan("feat", "/w", "abc", ["CLAUDE.md#build", "CLAUDE.md#build"], ["tests/x"])
    assert plan.memory == ("CLAUDE.md#build",)
    assert Plan.from_json(plan.to_json()) == plan


def test_a_memory_entry_without_a_section_is_refused_with_what_to_write() -> None:
    with pytest.raises(Invalid, match="FILE#KEY"):
        make_plan(memory=["CLAUDE.md"])


def test_too_many_tests_are_refused() -> None:
    with pytest.raises(Invalid, match="at most"):
        make_plan(tests=[f"t{n}" for n in range(300)])
