"""The watchdog's keys under ``leases:`` (docs/reference.md §2, §4.18): ``idle_after``, how long
a live claim may see no movement before ``memkeeper watch`` marks it idle (default 1200 s),
and ``idle_release_after``, how long a claim stays idle before the watchdog releases it
(default off). Each a whole number of seconds; ``0`` or ``off`` turns it off. Pure."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.model import IDLE_AFTER
from memkeeper.policy.values import Fail, show

KEYS = {"idle_after": IDLE_AFTER, "idle_release_after": 0}
OFF = ("off", False)  # what turns a key off, besides 0


def idle_settings(top: CommentedMap, fail: Fail) -> tuple[int, int]:
    """``(idle_after, idle_release_after)`` from ``leases:`` (0: off); ``fail`` for anything
    else. ``lease_settings`` has already checked that ``leases`` is a mapping of known keys."""
    node = top.get("leases")
    if not isinstance(node, CommentedMap):
        return IDLE_AFTER, 0
    idle, release = (_seconds(node, key, fail) for key in KEYS)
    return idle, release


def _seconds(node: CommentedMap, key: str, fail: Fail) -> int:
    value = node.get(key, KEYS[key])
    if value in OFF and type(value) is not int:
        return 0
    if type(value) is not int or value < 0:
        what = (
            f"leases.{key} must be a whole number of seconds (0 or off: never), not {show(value)}"
        )
        fail(node.lc.value(key), what, f"write e.g. `{key}: {KEYS[key] or 3600}` or `{key}: off`")
    return value
