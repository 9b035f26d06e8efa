"""Line-by-line three-way merges of one section's body: the rules around ``git merge-file``
(docs/reference.md §4 "Merging stale patches"). Pure functions over bytes; ``fs.gitmerge``
runs git.

git merges line by line: changes to different lines land, and — as in every git merge —
changes to the same or neighbouring lines conflict. Of those conflicts exactly one kind is
resolved here: both sides only inserted lines at the same place (the base's part of the
conflict is empty), where both insertions are kept, *theirs* (what is in the file now) first.
Any other conflict means the merge does not land.

Conflict markers are made longer than any run of marker characters starting a line of the
inputs, so the markers in git's output cannot be mistaken for text. A body without a final
line ending has one added for the merge (on all three, when none of them ends in one) and
taken off again, so that two agents appending to the last section of a file that ends without
a newline do not conflict over its last line.
"""

from __future__ import annotations

_MARKERS = b"<|=>"
MIN_MARKER = 7  # git's own


def marker_size(*texts: bytes) -> int:
    """A conflict-marker length that no line of ``texts`` starts with."""
    longest = 0
    for text in texts:
        for line in text.splitlines():
            if line[:1] and line[0] in _MARKERS:
                run = len(line) - len(line.lstrip(line[:1]))
                longest = max(longest, run)
    return max(MIN_MARKER, longest + 1)


def terminated(base: bytes, theirs: bytes, mine: bytes) -> tuple[bytes, bytes, bytes, bytes]:
    """The three texts as merged (a line ending added to each when none of them ends in one)
    and the suffix to take off the merged result again (``b""``: none)."""
    texts = (base, theirs, mine)
    if any(t.endswith((b"\n", b"\r")) or not t for t in texts):
        return base, theirs, mine, b""
    newline = b"\r\n" if b"\r\n" in base + theirs + mine else b"\n"
    return base + newline, theirs + newline, mine + newline, newline


def resolve(merged: bytes, size: int) -> bytes | None:
    """git's ``--diff3`` output (``theirs`` as the current file, ``mine`` as the other) with
    each both-sides-inserted conflict resolved as theirs then mine; None when any other
    conflict is in it."""
    start, middle, split, end = (bytes([c]) * size for c in b"<|=>")
    out: list[bytes] = []
    part: list[list[bytes]] = []  # while in a conflict: theirs, base, mine
    for line in merged.splitlines(keepends=True):
        bare = line.rstrip(b"\r\n")
        if not part:
            if _is_marker(bare, start):
                part = [[]]
            else:
                out.append(line)
        elif (len(part) == 1 and _is_marker(bare, middle)) or (len(part) == 2 and bare == split):
            part.append([])
        elif len(part) == 3 and _is_marker(bare, end):
            theirs, base, mine = part
            if base:
                return None  # both changed the same (or neighbouring) lines
            out += theirs + mine
            part = []
        else:
            part[-1].append(line)
    return None if part else b"".join(out)


def _is_marker(line: bytes, marker: bytes) -> bool:
    return line == marker or line.startswith(marker + b" ")
