"""The policy's ``meetings:`` mapping (docs/reference.md §4.32): ``on_overlap`` (a strict claim
blocked by another agent's claim opens a meeting with its holder; default false) and
``deadline`` (seconds a meeting has before it escalates; default 900). Pure."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.model import MEETING_DEADLINE
from memkeeper.policy.values import Fail, show

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

KEYS = ("on_overlap", "deadline")


def meetings(top: CommentedMap, fail: Fail, known_keys: Callable[..., None]) -> tuple[bool, int]:
    """``(on_overlap, deadline)`` from the policy's top level (the defaults without it)."""
    node = top.get("meetings")
    if node is None:
        return False, MEETING_DEADLINE
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
    return on, deadline
