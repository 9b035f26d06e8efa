"""The policy's ``meetings:`` mapping (docs/reference.md §4.32): ``on_overlap`` (a strict claim
blocked by another agent's claim opens a meeting with its holder; default false) and
``deadline`` (seconds a meeting has before it escalates; default 900), ``keep_days`` and
``keep`` (a resolved meeting is dropped that many days after it ended, and beyond the newest
that many resolved ones; defaults 30 and 1000). Pure."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.model import MEETING_DEADLINE, MEETING_KEEP, MEETING_KEEP_DAYS
from memkeeper.policy.values import Fail, show

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

KEYS = ("on_overlap", "deadline", "keep_days", "keep")


def meetings(
    top: CommentedMap, fail: Fail, known_keys: Callable[..., None]
) -> tuple[bool, int, int, int]:
    """``(on_overlap, deadline, keep_days, keep)`` from the policy's top level (the defaults
    without it)."""
    node = top.get("meetings")
    if node is None:
        return False, MEETING_DEADLINE, MEETING_KEEP_DAYS, MEETING_KEEP
    if not isinstance(node, CommentedMap):
        todo = "write `meetings:` with `on_overlap:` and `deadline:` under it"
        fail(top.lc.value("meetings"), f"`meetings` must be a mapping, not {show(node)}", todo)
    known_keys(node, KEYS, "in meetings")
    on, deadline = node.get("on_overlap", False), node.get("deadline", MEETING_DEADLINE)
    if not isinstance(on, bool):
        what = f"meetings.on_overlap must be true or false, not {show(on)}"
        fail(node.lc.value("on_overlap"), what, "write `on_overlap: true` or `on_overlap: false`")
    if type(deadline) is not int or deadline <= 0:
        what = f"meetings.deadline must be a positive whole number of seconds, not {show(deadline)}"
        fail(node.lc.value("deadline"), what, f"write e.g. `deadline: {MEETING_DEADLINE}`")
    kept = []
    for key, default, unit in (
        ("keep_days", MEETING_KEEP_DAYS, "days"),
        ("keep", MEETING_KEEP, ""),
    ):
        value = node.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            what = f"meetings.{key} must be a whole number{' of ' + unit if unit else ''} (0 or "
            fail(
                node.lc.value(key),
                what + f"more), not {show(value)}",
                f"write e.g. `{key}: {default}`",
            )
        kept.append(int(value))  # ruamel reads a 0 as its own int subclass
    return on, deadline, kept[0], kept[1]
