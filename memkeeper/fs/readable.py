"""Waiting until a descriptor has something to read: ``poll``, which takes a descriptor of
any number. ``select`` refuses one numbered 1024 or above (``filedescriptor out of range``),
as a long-lived process — the MCP server, the dashboard, a daemon — may come to hold.
"""

from __future__ import annotations

import math
import select

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class HasFileno(Protocol):
        def fileno(self) -> int: ...


def readable(source: int | HasFileno, timeout: float) -> bool:
    """True once ``source`` can be read without blocking (data, or its other end gone);
    False when ``timeout`` seconds pass first."""
    poller = select.poll()
    poller.register(source, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(math.ceil(max(0.0, timeout) * 1000)))
