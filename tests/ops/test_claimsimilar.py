"""Claims compared by meaning, through the Python API on both stores: a claim whose objective
is close to another agent's live claim is granted with a warning naming it and the score; an
unrelated one, an agent's own claims and a claim without objective get none; without the extra
nothing changes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.fs import embedding
from tests.ops.test_claimwaits import Background, Blocked, blocked

__all__ = ["blocked"]  # the fixture: which waiters have blocked on their FIFO

RETRY = "fix retry backoff in the http client"
TIMEOUTS = "make request timeouts configurable in the fetcher"
THEME = "dark mode for the settings page"


@pytest.fixture
def other(memory: Memory, sample: Path) -> Iterator[Memory]:
    """Agent ``agent-b`` on the same root and store as ``memory`` (agent ``agent-a``)."""
    opened = Memory.open(sample, agent="agent-b")
    yield opened
    opened.close()


def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> tuple[float, ...]:
        raise AssertionError(f"the model was asked for {text!r}")

    monkeypatch.setattr(embedding, "embed", refuse)


def test_a_similar_objective_is_granted_with_a_warning_naming_the_other_claim(
    memory: Memory, other: Memory
) -> None:
    first = memory.claim("src/http/", objective=RETRY)
    second = other.claim("src/fetch/", objective=TIMEOUTS)
    assert second.token == first.token + 1  # granted: a warning never blocks
    (warning,) = second.warnings
    assert warning.startswith(f"objective similar to claim {first.id} of agent-a (score 0.")
    assert f"{RETRY!r} on src/http/" in warning
    assert first.warnings == ()


def test_an_unrelated_objective_an_own_claim_and_no_objective_get_no_warning(
    memory: Memory, other: Memory
) -> None:
    memory.claim("src/http/", objective=RETRY)
    assert other.claim("src/ui/", objective=THEME).warnings == ()
    assert memory.claim("src/fetch/", objective=TIMEOUTS).warnings == ()  # its own work
    assert other.claim("src/x/").warnings == ()


def test_the_model_is_not_asked_when_there_is_nothing_to_compare(
    memory: Memory, other: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_model(monkeypatch)
    memory.claim("src/http/", objective=RETRY)  # nobody else's claim yet
    other.claim("src/a/")  # no objective
    memory.claim("src/b/", objective=TIMEOUTS)  # only its own and one without objective


def test_without_the_extra_a_claim_is_granted_as_before(
    memory: Memory, other: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.claim("src/http/", objective=RETRY)
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if it were not installed
    no_model(monkeypatch)
    assert other.claim("src/fetch/", objective=TIMEOUTS).warnings == ()


def test_the_policy_threshold_decides_what_is_similar(
    memory: Memory, other: Memory, sample: Path
) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "semantic:\n  threshold: 0.9\n")
    memory.claim("src/http/", objective=RETRY)
    assert other.claim("src/fetch/", objective=TIMEOUTS).warnings == ()
    assert len(other.claim("src/h2/", objective=RETRY).warnings) == 1  # the same words: 1.0


def test_a_model_that_will_not_load_is_a_warning_and_the_claim_stands(
    memory: Memory, other: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> tuple[float, ...]:
        raise embedding.ModelBroken("weights.safetensors: truncated — reinstall it")

    memory.claim("src/http/", objective=RETRY)
    monkeypatch.setattr(embedding, "embed", broken)
    claim = other.claim("src/fetch/", objective=TIMEOUTS)
    (warning,) = claim.warnings
    assert warning.startswith("objectives not compared with other claims': weights.safetensors")
    assert [c.id for c in other.claims()][-1] == claim.id


def test_a_claim_granted_after_a_wait_is_warned_too(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    held = a.claim("src/")
    similar = c.claim("lib/http/", objective=RETRY)
    waiter = Background(lambda: b.claim("src/fetch/", wait=30, objective=TIMEOUTS))
    blocked.wait_for(1)
    a.release(held.id)
    granted = waiter.result()
    (warning,) = granted.warnings
    assert warning.startswith(f"objective similar to claim {similar.id} of c (score 0.")
