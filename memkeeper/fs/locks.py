"""File locks: every writer of a managed file holds its lock (``Workspace.locked``), and the
store's schema upgrade holds one of its own — an exclusive ``flock`` across processes."""

from __future__ import annotations

import contextlib
import fcntl
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def file_lock(lock_path: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if missing) for the block."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
