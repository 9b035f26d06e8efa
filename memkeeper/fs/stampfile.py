"""With a shared store: this checkout's files' stat stamps (``store.protocol.StampStore``) in
one file of the memory home, ``stamps.json``. They describe this machine's files, not the
shared state, so they stay here (the SQLite store keeps them in its ``stamps`` table).

A cache, written by temp and rename and never fsynced: a file lost or torn reads as no
stamps (every file is read once more), and two processes saving at once keep one's rows —
the other's files are read again at the next look. Never wrong: a stamp only stands in for a
read when the file still shows it (``memkeeper.stamps.trusted``).
"""

from __future__ import annotations

import contextlib
import json
import os

from memkeeper.names import STAMP_FILE, home_temp
from memkeeper.stamps import Stamp, Stamped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

FORMAT = 1


class StampFile:
    """The stamps of the files of the root whose memory home is ``home``."""

    def __init__(self, home: str) -> None:
        self.path = os.path.join(home, STAMP_FILE)

    def stamps(self) -> dict[str, Stamped]:
        """Every file's last stamp, by path (none when the file is missing or not ours)."""
        try:
            with open(self.path, "rb") as handle:
                found = json.loads(handle.read())
            if found.get("format") != FORMAT:
                return {}
            return {path: _decode(path, row) for path, row in found["stamps"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}

    def put_stamps(self, rows: Sequence[Stamped]) -> None:
        """Replace these files' stamps, keeping the others'."""
        if not rows:
            return
        known = self.stamps()
        known.update((row.path, row) for row in rows)
        encoded = {path: _encode(row) for path, row in sorted(known.items())}
        data = json.dumps({"format": FORMAT, "stamps": encoded}, separators=(",", ":"))
        temp = home_temp(self.path, os.getpid())
        try:
            with open(temp, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(temp, self.path)
        except OSError:  # a full disk, a home gone: the next look reads the files again
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _encode(row: Stamped) -> list[Any]:
    return [*row.stamp, row.hash, row.taken_ns, row.clean]


def _decode(path: str, row: list[Any]) -> Stamped:
    size, mtime, ctime, inode, device, hash_, taken, clean = row
    values = (size, mtime, ctime, inode, device, taken)
    if not all(type(v) is int for v in values) or type(hash_) is not str:
        raise ValueError(f"{path}: not a stamp")
    if clean is not None and type(clean) is not str:
        raise ValueError(f"{path}: not a check's key")
    return Stamped(path, Stamp(size, mtime, ctime, inode, device), hash_, taken, clean)
