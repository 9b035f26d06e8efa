"""The suite's own order (tests/conftest.py): dearest tests first, so that pytest-xdist's
workers end the run on cheap ones together."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import E2E, TESTS, cost_rank

if TYPE_CHECKING:
    import pytest


@given(st.integers())
def a_property(n: int) -> None:
    assert n == n


def a_plain_test() -> None:
    pass


def fake(path: str, obj: object) -> pytest.Item:
    return cast("pytest.Item", SimpleNamespace(path=TESTS / path, obj=obj))


def test_end_to_end_tests_come_first_then_property_tests_then_the_rest() -> None:
    plain = fake("ops/test_patch.py", a_plain_test)
    prop = fake("ops/test_patch.py", a_property)
    e2e_prop = fake("e2e/test_fuzz.py", a_property)
    e2e = fake("e2e/test_crash.py", a_plain_test)
    assert E2E in e2e.path.parents
    ranked = sorted([plain, prop, e2e_prop, plain, e2e], key=cost_rank)
    assert ranked == [e2e_prop, e2e, prop, plain, plain]


def test_this_session_runs_in_that_order(request: pytest.FixtureRequest) -> None:
    ranks = [cost_rank(item) for item in request.session.items]
    assert ranks == sorted(ranks)
