"""Lines of bytes as markdown-it counts them: ``\\r\\n``, ``\\r`` and ``\\n`` each end a line.

Never ``str.splitlines()``: it also splits on form feeds, ``\\x85``, ``\\u2028`` and others,
which Markdown treats as ordinary characters. Hot path: stdlib only.
"""

from __future__ import annotations

import re

LINE_END = re.compile(rb"\r\n|\r|\n")
# A stable-id marker line, decoded and without its line ending (docs/reference.md §3): the
# heading just below it takes the key NAME, and its section starts at the marker.
STABLE_ID = re.compile(r"\s*<!--\s*memkeeper:section\s+id=([\w.\-]+(?:/[\w.\-]+)*)\s*-->\s*")


def line_starts(data: bytes) -> list[int]:
    """Byte offset of each line's start (an empty input has no lines)."""
    starts = [0] + [m.end() for m in LINE_END.finditer(data)]
    if starts[-1] == len(data):
        starts.pop()
    return starts


def count_lines(data: bytes) -> int:
    """Number of lines, counting a last line without a line ending."""
    crlf = data.count(b"\r\n")
    breaks = data.count(b"\n") + data.count(b"\r") - crlf
    return breaks + (1 if data and not data.endswith((b"\n", b"\r")) else 0)


def detect_newline(data: bytes) -> bytes:
    """The most frequent line ending (ties go to the one seen first); ``\\n`` if none."""
    first = LINE_END.search(data)
    if first is None:
        return b"\n"
    crlf = data.count(b"\r\n")
    counts = {b"\r\n": crlf, b"\r": data.count(b"\r") - crlf, b"\n": data.count(b"\n") - crlf}
    best = max(counts.values())
    return first.group() if counts[first.group()] == best else max(counts, key=counts.__getitem__)


def not_text(data: bytes, *, nul_ok: bool = False) -> tuple[str, int] | None:
    """The first thing that makes ``data`` not text — ``("nul", offset)`` for a NUL byte
    (unless ``nul_ok``), ``("utf-8", offset)`` for an invalid UTF-8 sequence — or ``None``."""
    nul = -1 if nul_ok else data.find(b"\x00")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if nul < 0 or exc.start < nul:
            return "utf-8", exc.start
    return None if nul < 0 else ("nul", nul)


def position(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and 1-based byte column of ``offset`` (a byte of ``data``)."""
    from bisect import bisect_right

    starts = line_starts(data)
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1
