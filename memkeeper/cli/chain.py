"""The CLI verb for the event log's compaction (docs/reference.md §8 "Compaction"):
``compact``, the oldest events as the policy's ``events:`` lets them go, replaced by a
signed checkpoint. ``verify [--full]`` is a base verb (``cli.main``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare ``compact`` with ``verb(name, help)`` (which adds the common options)."""
    verb("compact", "compact the event log's oldest events into a checkpoint, as the policy says")


def cmd_compact(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops.compact import compact

    return compact(memory.workspace)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "compact": cmd_compact,
}
