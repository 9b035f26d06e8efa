"""Pure revision bookkeeping: what the index becomes when a file's bytes change.

A section's rev starts at 1 and goes up by one on every change of its bytes, whoever made
it; a key that disappears keeps its rev (hash NULL), so when it returns it continues counting.
Only the rows that differ from the index's are written: a change of one section of a
10,000-section file re-parses the sections around it (``markdown.resplit``) and writes
its row, not 10,000.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.events import digest
from memkeeper.markdown.lines import count_lines
from memkeeper.markdown.resplit import Resplit, changed_span, resplit, stable_of
from memkeeper.markdown.sections import Document, Section, split
from memkeeper.records import SectionRow

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class Reindex:
    rows: tuple[SectionRow, ...]  # the rows that differ from the index's (present and absent)
    changed: tuple[str, ...]  # keys whose bytes changed, appeared or disappeared
    doc: Document


def rows_for(doc: Document) -> list[SectionRow]:
    """Index rows for every section of ``doc``, all at rev 1."""
    return [_row(doc, s, ord_) for ord_, s in enumerate(doc.sections)]


def _row(doc: Document, s: Section, ord_: int, old: SectionRow | None = None) -> SectionRow:
    """Section ``s``'s row, its revision going on from ``old`` (the key's row before; none:
    1) — built once: ``_replace`` costs as much again (at init, 1 ms of a 20-section file's 9)."""
    heading, body = doc.heading(s), doc.body(s)
    text = heading + body
    hash = digest(text)
    return SectionRow(
        s.key, ord_, _next_rev(old, hash), hash, True, s.title, s.level, s.base, heading, body,
        count_lines(text),
    )  # fmt: skip


def _next_rev(old: SectionRow | None, hash: str) -> int:
    """The revision of a section whose bytes hash to ``hash``, its row ``old`` before."""
    if old is None:
        return 1
    return old.rev if old.present and old.hash == hash else old.rev + 1


def indexed(rows: Sequence[SectionRow]) -> Document:
    """The document the index's present rows (in order) describe, as ``split`` gave it."""
    sections, start, line = [], 0, 1
    for row in rows:
        body_start, end = start + len(row.heading), start + len(row.heading) + len(row.body)
        stable = stable_of(row.heading, row.key) if row.level else None
        last = line + row.lines - 1
        sections.append(
            Section(
                row.key, row.base, row.title, row.level, start, body_start, end, line, last, stable
            )
        )
        start, line = end, last + 1
    return Document(b"".join(row.heading + row.body for row in rows), tuple(sections))


def reindex(
    previous: list[SectionRow], data: bytes, path: str = "<input>", doc: Document | None = None
) -> Reindex:
    """What the index's rows for a file (``previous``, present and absent) become for its
    new bytes ``data``: only the sections around the change are parsed again, and only the
    rows that differ are returned. ``doc``: ``data`` already split whole (bulk indexing),
    used where the whole file is parsed anyway (no present rows)."""
    present = [row for row in previous if row.present]
    if not present:
        doc = doc if doc is not None and doc.data is data else split(data, path)
        return compare(previous, Resplit(doc, 0, 0, len(doc.sections)))
    old = indexed(present)
    return compare(previous, resplit(old, data, *changed_span(old.data, data), path))


def compare(previous: list[SectionRow], change: Resplit) -> Reindex:
    """The rows ``change`` makes differ from ``previous`` (present rows first, in order):
    the sections it parsed again, those that left it, and those after it when it moved them."""
    doc, first, old_stop, new_stop = change.doc, change.first, change.old_stop, change.new_stop
    present = [row for row in previous if row.present]
    before = {row.key: row for row in previous}
    out: list[SectionRow] = []
    changed: list[str] = []
    for ord_ in range(first, new_stop):
        section = doc.sections[ord_]
        old = before.get(section.key)
        row = _row(doc, section, ord_, old)
        if old is not None and old.present and old.hash == row.hash:
            if row != old:
                out.append(row)  # the same bytes, moved (another ord, key or title)
            continue
        out.append(row)
        changed.append(row.key)
    now = {s.key for s in doc.sections[first:new_stop]}
    for old in present[first:old_stop]:
        if old.key not in now:
            out.append(old._replace(present=False, hash=None))
            changed.append(old.key)
    moved = new_stop - old_stop
    if moved:
        out += [row._replace(ord=row.ord + moved) for row in present[old_stop:]]
    return Reindex(tuple(out), tuple(changed), doc)
