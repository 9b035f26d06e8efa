"""``StoreUnavailable``: the class of a shared store's outage, with the exit code and JSON the
outage had as a plain ``EnvironmentFailure`` (``reason`` ``store_unavailable``). Its module
loads no etcd client — the hooks and ``read`` catch it on every call: checked in a fresh
interpreter by tests/e2e/test_startup_imports.py."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memkeeper.cli.boundary import fail
from memkeeper.errors import EnvironmentFailure
from memkeeper.store.errors import StoreRefused, StoreUnavailable

if TYPE_CHECKING:
    import pytest


def test_an_outage_is_an_environment_failure_of_reason_store_unavailable() -> None:
    outage = StoreUnavailable("state store unavailable: no etcd member answered (h:1)")
    assert isinstance(outage, EnvironmentFailure)
    assert outage.exit_code == 1
    assert outage.reason == "store_unavailable"
    assert outage.fields == {"reason": "store_unavailable"}
    assert outage.to_json() == {
        "status": "error",
        "message": "state store unavailable: no etcd member answered (h:1)",
        "reason": "store_unavailable",
    }


def test_the_cli_prints_and_exits_as_for_the_plain_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    message = "state store unavailable: no etcd member answered (h:1)"
    plain = EnvironmentFailure(message, reason="store_unavailable")
    assert fail(StoreUnavailable(message), as_json=True) == fail(plain, as_json=True) == 1
    first, second = capsys.readouterr().out.splitlines()
    assert first == second
    assert json.loads(first)["reason"] == "store_unavailable"


def test_other_environment_failures_are_not_outages() -> None:
    assert not isinstance(EnvironmentFailure("the disk is full"), StoreUnavailable)
    assert not isinstance(EnvironmentFailure("too big", reason="store_too_large"), StoreUnavailable)


def test_a_refusal_is_an_outage_to_whoever_carries_on_but_says_so_by_its_reason() -> None:
    refusal = StoreRefused("state store etcds://h:1/p refused memkeeper (nothing was changed): …")
    assert isinstance(refusal, StoreUnavailable)
    assert refusal.exit_code == 1
    assert refusal.reason == "store_refused"
    assert refusal.to_json()["reason"] == "store_refused"


def test_an_outage_keeps_its_reason_first_among_its_fields() -> None:
    outage = StoreUnavailable("state store unavailable: …", outcome="unknown")
    assert list(outage.to_json()) == ["status", "message", "reason", "outcome"]
