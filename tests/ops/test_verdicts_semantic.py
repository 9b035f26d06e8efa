"""``Workspace.semantic_threshold``: the policy's ``semantic.threshold``, parsed once per policy
hash and then read from the cache — by a new process too, so a comparison of objectives parses
no YAML — and parsed again when the policy changes."""

from __future__ import annotations

from pathlib import Path

from memkeeper.clock import FakeClock
from memkeeper.ops.workspace import Workspace
from tests.ops.test_verdicts import parses

__all__ = ["parses"]  # the fixture: the policy bytes parsed so far


def test_the_threshold_is_parsed_once_per_policy_and_cached_across_workspaces(
    ws: Workspace, sample: Path, parses: list[bytes | None]
) -> None:
    assert ws.semantic_threshold() == 0.2
    assert len(parses) == 1
    again = Workspace(sample, "agent-b", FakeClock(1_800_000_000.0))
    try:
        assert again.semantic_threshold() == 0.2
    finally:
        again.close()
    assert len(parses) == 1  # the other process read the store's cache
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "semantic:\n  threshold: 0.4\n")
    assert ws.semantic_threshold() == 0.4
    assert len(parses) == 2
