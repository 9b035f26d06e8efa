"""The policy's ``events:`` mapping (docs/reference.md §8 "Compaction"): ``keep_days`` and
``keep`` — the log's events are compacted into a checkpoint once they are older than that
many days, and beyond the newest that many; either alone bounds the log by itself, and without
both (the default) nothing is ever compacted. Pure."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.values import Fail, show

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

KEYS = ("keep_days", "keep")
_EXAMPLES = {"keep_days": 90, "keep": 100000}


def events(
    top: CommentedMap, fail: Fail, known_keys: Callable[..., None]
) -> tuple[int | None, int | None]:
    """``(keep_days, keep)`` from the policy's top level (None: not bounded that way)."""
    node = top.get("events")
    if node is None:
        return None, None
    if not isinstance(node, CommentedMap):
        todo = "write `events:` with `keep_days:` or `keep:` under it"
        fail(top.lc.value("events"), f"`events` must be a mapping, not {show(node)}", todo)
    known_keys(node, KEYS, "in events")
    kept: list[int | None] = []
    for key in KEYS:
        if key not in node:
            kept.append(None)
            continue
        value = node[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            unit = " of days" if key == "keep_days" else ""
            fail(
                node.lc.value(key),
                f"events.{key} must be a whole number{unit} (1 or more), not {show(value)}",
                f"write e.g. `{key}: {_EXAMPLES[key]}`, or leave it out to keep every event",
            )
        kept.append(int(value))  # ruamel reads a number as its own int subclass
    return kept[0], kept[1]
