"""``leases:`` in `.memkeeper.yaml` (docs/reference.md §2): how long claims live, how long an
ended claim waits before another may take it over, how long a ``complete --verify`` command
may run. Each a positive whole number of seconds; ``default_ttl`` at most ``max_ttl``."""

from __future__ import annotations

from collections.abc import Callable

from ruamel.yaml.comments import CommentedMap

from memkeeper.policy.idlekeys import KEYS as IDLE_KEYS
from memkeeper.policy.model import LEASE_DEFAULTS
from memkeeper.policy.values import Fail, show

KnownKeys = Callable[[CommentedMap, tuple[str, ...], str], None]


def lease_settings(top: CommentedMap, fail: Fail, known_keys: KnownKeys) -> tuple[int, ...]:
    """default_ttl, max_ttl, takeover_grace and verify_timeout, in that order;
    ``fail(position, what, todo)`` for anything invalid."""
    node = CommentedMap() if top.get("leases") is None else top["leases"]
    if not isinstance(node, CommentedMap):
        todo = "write `leases:` with `default_ttl:` and `max_ttl:` under it"
        fail(top.lc.value("leases"), f"`leases` must be a mapping, not {show(node)}", todo)
    known_keys(node, (*LEASE_DEFAULTS, *IDLE_KEYS), "in leases")
    values = tuple(_seconds(node, key, fail) for key in LEASE_DEFAULTS)
    default_ttl, max_ttl = values[0], values[1]
    if default_ttl > max_ttl:
        what = f"leases.default_ttl {default_ttl} is greater than leases.max_ttl {max_ttl}"
        fail(node.lc.value("default_ttl"), what, "lower default_ttl or raise max_ttl")
    return values


def _seconds(node: CommentedMap, key: str, fail: Fail) -> int:
    fallback = LEASE_DEFAULTS[key]
    value = node.get(key, fallback)
    if type(value) is not int or value <= 0:
        what = f"leases.{key} must be a positive whole number of seconds, not {show(value)}"
        fail(node.lc.value(key), what, f"write e.g. `{key}: {fallback}`")
    return value
