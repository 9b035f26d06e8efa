"""Sections after a change of some bytes, re-parsing only the sections around the change.

A top-level heading leaves markdown-it's block parser with nothing open: no fence, HTML
block, paragraph, list or quote runs past it. So the parse after one depends only on the
text that follows, and a document can be re-parsed in a window: from the end of the last
heading that lies wholly before the change (the file's start when there is none) to the end
of the first old heading after it that the new text still parses as the same heading at the
same place. A change that opens a fence or an HTML block, or makes a paragraph run on into a
setext heading, moves that heading: the window grows (1, 2, 4 … headings further) until
one is found again, or reaches the end of the file. Keys are derived again only when the
window's headings are not the ones it held before (a heading added, removed, renamed or
re-levelled changes its successors' ancestors and suffixes); the sections after the window
are the old ones, moved.

Link reference definitions are document-wide (a heading ``# [x]`` reads ``x`` when ``[x]:``
is defined anywhere): a change whose window holds one, or a re-parsed heading with a ``[``
in a document that holds one, is split whole. ``split`` is the reference this must equal
(``tests/markdown/test_resplit.py`` compares them on generated documents and edits).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace

from memkeeper.markdown.lines import LINE_END, STABLE_ID, count_lines, line_starts, not_text
from memkeeper.markdown.sections import (
    Document,
    Heading,
    Section,
    assign_keys,
    build,
    find_headings,
    split,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["Resplit", "changed_span", "resplit", "stable_of"]

_BOM = b"\xef\xbb\xbf"
_DEFINITION = b"]:"  # every link reference definition holds it: "[label]:"


@dataclass(frozen=True, slots=True)
class Resplit:
    """The new document and what changed: the old sections ``[first, old_stop)`` became the
    new ``[first, new_stop)``; every other section is an old one (moved after the window)."""

    doc: Document
    first: int
    old_stop: int
    new_stop: int


def changed_span(old: bytes, new: bytes) -> tuple[int, int, int]:
    """``(start, old_end, new_end)``: the bytes that differ, between the longest common
    prefix and the longest common suffix (which do not overlap)."""
    limit = min(len(old), len(new))
    start = _common(lambda n: old[:n] == new[:n], limit)
    rest = limit - start
    tail = _common(lambda n: old[len(old) - n :] == new[len(new) - n :], rest)
    return start, len(old) - tail, len(new) - tail


def _common(same: Callable[[int], bool], limit: int) -> int:
    """The largest ``n <= limit`` with ``same(n)`` (true up to some n, then false): a binary
    search of slices compared at C speed, not a loop over bytes."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low


def resplit(
    old: Document, data: bytes, start: int, old_end: int, new_end: int, path: str = "<input>"
) -> Resplit:
    """The sections of ``data``, which is ``old.data`` with ``old.data[start:old_end]``
    replaced by ``data[start:new_end]``; equal to ``split(data, path)`` (which raises
    ``Invalid`` for text that is not UTF-8 or holds NUL)."""
    sections = old.sections
    anchor = -1 if _open_front_matter(old) else _anchor(old, start)
    first_heading = 1 if sections and sections[0].level == 0 else 0
    lo = max(anchor + 1, first_heading)
    after = bisect_left([s.start for s in sections], old_end, lo=lo)
    step = 1
    while True:
        found = _window(old, data, anchor, after, new_end - old_end, path)
        if found is not None:
            return found
        after = min(after + step, len(sections))
        step *= 2


def _whole(old: Document, data: bytes, path: str) -> Resplit:
    doc = split(data, path)
    return Resplit(doc, 0, len(old.sections), len(doc.sections))


def _anchor(old: Document, start: int) -> int:
    """The last heading section whose heading lies wholly before ``start`` (-1: none)."""
    sections = old.sections
    index = bisect_right([s.body_start for s in sections], start) - 1
    while index >= 0:
        section = sections[index]
        whole = section.body_start < start or old.heading(section).endswith(b"\n")
        if section.level > 0 and whole:  # (a "\r" could fuse with a "\n" put after it)
            return index
        index -= 1
    return -1


def _window(
    old: Document, data: bytes, anchor: int, after: int, delta: int, path: str
) -> Resplit | None:
    """The re-split with the window running from the anchor's body to the end of the heading
    of section ``after`` (to the end of the file when there is none), or None when the new
    text does not end a top-level heading there (the window must grow)."""
    sections = old.sections
    base = sections[anchor].body_start if anchor >= 0 else 0
    last = sections[after] if after < len(sections) else None
    stop = len(data) if last is None else last.body_start + delta
    chunk = data[base:stop]
    if _DEFINITION in chunk or _DEFINITION in old.data[base : stop - delta]:
        return _whole(old, data, path)  # the document's link definitions may change
    if not_text(chunk) is not None:
        return _whole(old, data, path)  # raises, with the line in the file
    starts = line_starts(chunk)
    text = chunk.decode("utf-8")
    text = text.removeprefix("\ufeff") if base == 0 else text
    heads, front = find_headings(chunk, text, starts, first=base == 0)
    if any(head.linked for head in heads) and _DEFINITION in data:
        return _whole(old, data, path)
    if last is not None and (not heads or heads[-1].body_line != count_lines(chunk)):
        return None
    if last is not None and base == 0 and not front and _opens_front_matter(chunk):
        return None  # a closing line after the window would make it front matter
    line0 = _body_line(old, sections[anchor]) if anchor >= 0 else 0
    stop_index = after + 1 if last is not None else len(sections)
    keys = _keys(sections, anchor, stop_index, heads)
    inner = heads[:-1] if last is not None else heads
    end = len(data) if last is None else base + starts[heads[-1].start_line]
    built = build(data, inner, keys[: len(inner)], starts, end, base=base, line0=line0)
    tail: list[Section] = []
    if last is not None:
        shift = line0 + heads[-1].body_line - _body_line(old, last)
        key = keys[len(heads) - 1]
        built.append(
            _moved(last, delta, shift, key, heads[-1], base + starts[heads[-1].start_line], line0)
        )
        rest = keys[len(heads) :] or [(s.key, s.base) for s in sections[stop_index:]]
        tail = _tail(sections[stop_index:], delta, shift, rest)
    head = list(sections[: max(anchor, 0)])
    if anchor >= 0:
        head.append(_ended(sections[anchor], built, end, base, starts, line0))
    first = max(anchor, 0)
    doc = Document(data, (*head, *built, *tail))
    if any(a.key != b.key for a, b in zip(tail, sections[stop_index:], strict=True)):
        return Resplit(doc, first, len(sections), len(doc.sections))  # renamed after it
    return Resplit(doc, first, stop_index, first + len(built) + (anchor >= 0))


def _opens_front_matter(data: bytes) -> bool:
    """Whether ``data`` starts with a front-matter opener, a line of three or more dashes
    that a later closing line would make front matter of everything up to it."""
    return data.removeprefix(_BOM).startswith(b"---")


def _open_front_matter(old: Document) -> bool:
    """Whether ``old`` opens front matter it never closes: any change may close it, so
    every window starts at the file's start."""
    if not _opens_front_matter(old.data):
        return False
    first = old.sections[0]
    if first.level > 0:
        return True  # the opener is the heading's own underline (or a stable id's marker)
    preamble = old.data[: first.end]
    text = preamble.decode("utf-8").removeprefix("\ufeff")
    return not find_headings(preamble, text, line_starts(preamble), first=True)[1]


def _body_line(old: Document, section: Section) -> int:
    """The 0-based line on which ``section``'s body starts."""
    return section.start_line - 1 + count_lines(old.heading(section))


def _keys(
    sections: Sequence[Section], anchor: int, stop: int, heads: Sequence[Heading]
) -> list[tuple[str, str]]:
    """The window's headings' keys: the old ones when its headings are the old ones (each
    key depends only on the headings before it), else every key from the window on derived
    again (those after the window follow)."""
    replaced = sections[anchor + 1 : stop]
    before = [(s.level, s.title, s.stable) for s in replaced if s.level > 0]
    now = [(h.level, h.title, h.stable) for h in heads]
    if before == now:
        return [(s.key, s.base) for s in replaced if s.level > 0]
    ahead = sections[: anchor + 1]
    rest = [(s.level, s.title, s.stable) for s in sections[stop:]]
    return assign_keys([*now, *rest], (s.key for s in ahead), ancestors(ahead))


def ancestors(sections: Sequence[Section]) -> list[tuple[int, str]]:
    """``(level, key)`` of the headings a heading after ``sections`` may nest in, outermost
    first: walking back, each heading of a lower level than all seen since."""
    found: list[tuple[int, str]] = []
    for s in reversed(sections):
        if s.level and (not found or s.level < found[-1][0]):
            found.append((s.level, s.key))
            if s.level == 1:
                break
    return found[::-1]


def _moved(
    last: Section,
    delta: int,
    shift: int,
    key: tuple[str, str],
    head: Heading,
    start: int,
    line0: int,
) -> Section:
    """The window's last section: its heading as found again, its body the old one, moved."""
    return replace(
        last,
        key=key[0],
        base=key[1],
        title=head.title,
        level=head.level,
        stable=head.stable,
        start=start,
        start_line=line0 + head.start_line + 1,
        body_start=last.body_start + delta,
        end=last.end + delta,
        end_line=last.end_line + shift,
    )


def _tail(
    rest: Sequence[Section], delta: int, shift: int, keys: Sequence[tuple[str, str]]
) -> list[Section]:
    """The sections after the window, ``delta`` bytes and ``shift`` lines further on, with
    ``keys`` (derived again when the window's headings changed)."""
    same = all(key == (s.key, s.base) for key, s in zip(keys, rest, strict=True))
    if not delta and not shift and same:
        return list(rest)
    return [
        Section(
            key,
            name,
            s.title,
            s.level,
            s.start + delta,
            s.body_start + delta,
            s.end + delta,
            s.start_line + shift,
            s.end_line + shift,
            s.stable,
        )
        for (key, name), s in zip(keys, rest, strict=True)
    ]


def _ended(
    section: Section, built: list[Section], end: int, base: int, starts: list[int], line0: int
) -> Section:
    """The anchor's section, now running to the window's first section (or ``end``)."""
    stop = built[0].start if built else end
    return replace(section, end=stop, end_line=line0 + bisect_right(starts, stop - 1 - base))


def stable_of(heading: bytes, key: str) -> str | None:
    """The stable id a section whose heading bytes are ``heading`` and whose key is ``key``
    was named by: its first line is a stable-id marker naming that key (or the key's stem,
    made unique with a suffix). For sections read back from an index, which keeps no flag."""
    ending = LINE_END.search(heading) if b"<!--" in heading else None
    if ending is None:
        return None
    line = heading[: ending.end()].decode("utf-8", "replace").removeprefix("\ufeff")
    match = STABLE_ID.fullmatch(line)
    if match is None:
        return None
    name = match.group(1)
    return name if key == name or key.startswith(name + "-") else None
