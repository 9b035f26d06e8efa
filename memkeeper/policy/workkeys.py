"""The policy's ``work:`` mapping (docs/reference.md §4.33): ``keep_days`` and ``keep`` (a done
or failed work item is dropped that many days after it ended, and beyond the newest that many
ended ones — never while an item not done depends on it; defaults 30 and 1000). Pure."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.model import WORK_KEEP, WORK_KEEP_DAYS
from memkeeper.policy.values import Fail, show

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

KEYS = ("keep_days", "keep")


def work(top: CommentedMap, fail: Fail, known_keys: Callable[..., None]) -> tuple[int, int]:
    """``(keep_days, keep)`` from the policy's top level (the defaults without it)."""
    node = top.get("work")
    if node is None:
        return WORK_KEEP_DAYS, WORK_KEEP
    if not isinstance(node, CommentedMap):
        todo = "write `work:` with `keep_days:` and `keep:` under it"
        fail(top.lc.value("work"), f"`work` must be a mapping, not {show(node)}", todo)
    known_keys(node, KEYS, "in work")
    kept = []
    for key, default, unit in (("keep_days", WORK_KEEP_DAYS, " of days"), ("keep", WORK_KEEP, "")):
        value = node.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            what = f"work.{key} must be a whole number{unit} (0 or more), not {show(value)}"
            fail(node.lc.value(key), what, f"write e.g. `{key}: {default}`")
        kept.append(int(value))  # ruamel reads a 0 as its own int subclass
    return kept[0], kept[1]
