"""How the policy's error messages name a value the user wrote, and the shape of the ``fail``
callback the key parsers report through (``parse``, ``leases``, ``semantic``,
``meetingkeys``): one wording for every key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn

Fail = Callable[[tuple[int, int], str, str], NoReturn]


def show(value: object) -> str:
    """``'text'``, ``true``/``false``, ``null``, ``a mapping``, ``a list``, else as written."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping | list):
        return "a mapping" if isinstance(value, Mapping) else "a list"
    return str(value)
