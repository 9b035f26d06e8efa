"""``memkeeper emit``: coordination events recorded from outside (a completion, a risk).

The type is a lowercase dotted name that none of memkeeper's own families use, so an emitted
event can never pass for an edit, a claim or a policy verdict; the data is a JSON object.
Templates in generated regions pick them up like any other event (``events | types=…``).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Event

TYPE_PATTERN = re.compile(r"[a-z][a-z0-9_.-]{0,99}")
RESERVED = ("section", "entry", "region", "reconcile", "claim", "policy")
MAX_DATA_BYTES = 64 * 1024
_JSON_NAMES = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "true or false", type(None): "null"}  # fmt: skip


def emit(ws: Workspace, type: str, data: Mapping[str, Any] | None = None) -> Event:
    """Record ``type`` with ``data`` as an event by ``memory.agent``."""
    check_type(type)
    fields = check_data(dict(data or {}))

    def once() -> Event:
        with ws.store.writing():
            return ws.record(type, None, None, fields)

    return ws.again(once)


def check_type(type: str) -> None:
    """``Invalid`` unless ``type`` is a sane name outside memkeeper's own families."""
    if TYPE_PATTERN.fullmatch(type) is None:
        raise Invalid(
            f"event type {type!r}: use lowercase letters, digits and . _ - starting with a "
            "letter, at most 100 characters — for example task.completed",
            type=type,
        )
    family = type.split(".", 1)[0]
    if family in RESERVED:
        raise Invalid(
            f"event type {type!r}: {family}.* events are memkeeper's own and cannot be "
            "emitted — pick another name, for example task.completed or risk.found",
            type=type,
        )


def check_data(data: dict[str, Any]) -> dict[str, Any]:
    """The data as it will be stored; ``Invalid`` unless plain, finite JSON of modest size."""
    try:
        text = json.dumps(data, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise Invalid(f"event data is not plain JSON ({exc}) — pass a JSON object") from None
    if len(text.encode("utf-8")) > MAX_DATA_BYTES:
        raise Invalid(
            f"event data is {len(text)} characters; the limit is {MAX_DATA_BYTES} bytes — "
            "record a summary and point at a file for the rest"
        )
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def parse_data(text: str | None) -> dict[str, Any]:
    """``--data JSON`` as a dict; ``Invalid`` for bad JSON or anything but an object."""
    if text is None:
        return {}
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise Invalid(
            f"--data: not valid JSON ({exc}) — pass an object like '{{\"k\": 1}}'"
        ) from None
    if not isinstance(value, dict):
        what = _JSON_NAMES.get(type(value), type(value).__name__)
        raise Invalid(f"--data: must be a JSON object, not {what} — wrap it in {{...}}")
    return value


def _no_constant(name: str) -> float:
    if name in ("NaN", "Infinity", "-Infinity"):
        raise ValueError(f"{name} is not JSON")
    return math.nan  # never reached: json only calls this for the three names above
