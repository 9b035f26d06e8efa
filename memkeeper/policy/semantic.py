"""``semantic:`` in `.memkeeper.yaml` (docs/reference.md §2): from which score two claims'
objectives are called similar. Validated whether or not the ``semantic`` extra is installed,
so a policy means the same on every machine of a fleet."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.model import SEMANTIC_THRESHOLD
from memkeeper.policy.values import Fail, show

_KEYS = ("threshold",)
_TODO = f"write `threshold: {SEMANTIC_THRESHOLD}` under `semantic:` (higher: fewer warnings)"


def semantic_threshold(top: CommentedMap, fail: Fail) -> float:
    """``semantic.threshold``: a number above 0 and at most 1 (the default when absent);
    ``fail(position, what, todo)`` for anything else."""
    node = top.get("semantic")
    if node is None:
        return SEMANTIC_THRESHOLD
    if not isinstance(node, CommentedMap):
        fail(top.lc.value("semantic"), f"`semantic` must be a mapping, not {show(node)}", _TODO)
    for key in node:
        if key not in _KEYS:
            what = f"unknown key {show(key)} in semantic"
            fail(node.lc.key(key), what, "the one key under `semantic:` is `threshold`")
    value = node.get("threshold", SEMANTIC_THRESHOLD)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not 0 < value <= 1:
        what = f"semantic.threshold must be a number above 0 and at most 1, not {show(value)}"
        fail(node.lc.value("threshold"), what, _TODO)
    return float(value)
