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


def insertions(base: bytes, theirs: bytes, mine: bytes) -> bytes | None:
    """The merge git would give (with ``resolve``'s rule) when both sides only inserted
    lines, each at one place its diff cannot put anywhere else; None otherwise — then git
    decides. The common case of agents adding lines to one section, answered without a
    process: a ``git merge-file`` costs milliseconds, under the file's lock. Lines are split
    as git splits them (on ``\n`` only); property-tested against git."""
    lines = _lines(base)
    ours, others = _insertion(lines, _lines(theirs)), _insertion(lines, _lines(mine))
    if ours is None or others is None:
        return None
    (at_t, added_t), (at_m, added_m) = ours, others
    if at_t == at_m:  # both at one place: theirs first, one copy when they agree
        added = added_t if added_t == added_m else added_t + added_m
        return b"".join(lines[:at_t] + added + lines[at_t:])
    (first, early), (second, late) = sorted([ours, others])
    return b"".join(lines[:first] + early + lines[first:second] + late + lines[second:])


def _lines(data: bytes) -> list[bytes]:
    """``data``'s lines with their endings, split as git splits them: on ``\n`` only."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _insertion(base: list[bytes], lines: list[bytes]) -> tuple[int, list[bytes]] | None:
    """``(position, lines inserted)`` when ``lines`` is ``base`` with lines inserted at one
    position that is unambiguous — the inserted run can neither slide up nor down over an
    equal line, so every diff places it there; None otherwise."""
    if len(lines) <= len(base) or not base or not base[-1].endswith(b"\n"):
        return None
    head = 0
    while head < len(base) and base[head] == lines[head]:
        head += 1
    tail = 0
    while tail < len(base) - head and base[-1 - tail] == lines[-1 - tail]:
        tail += 1
    if head + tail != len(base):
        return None
    added = lines[head : len(lines) - tail]
    if head and base[head - 1] == added[-1]:  # the run could slide up
        return None
    if head < len(base) and base[head] == added[0]:  # … or down
        return None
    return head, added


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
