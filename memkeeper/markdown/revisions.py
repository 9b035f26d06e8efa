"""Pure revision bookkeeping: what the index becomes when a file's bytes change.

A section's rev starts at 1 and goes up by one on every change of its bytes, whoever made
it; a key that disappears keeps its rev (hash NULL), so when it returns it continues counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.events import digest
from memkeeper.markdown.lines import count_lines
from memkeeper.records import SectionRow

if TYPE_CHECKING:
    from memkeeper.markdown.sections import Document


@dataclass(frozen=True, slots=True)
class Reindex:
    rows: tuple[SectionRow, ...]  # every row to write (present and newly absent)
    changed: tuple[str, ...]  # keys whose bytes changed, appeared or disappeared


def rows_for(doc: Document) -> list[SectionRow]:
    """Index rows for every section of ``doc``, all at rev 1."""
    rows = []
    for ord_, s in enumerate(doc.sections):
        heading, body = doc.heading(s), doc.body(s)
        rows.append(
            SectionRow(
                s.key,
                ord_,
                1,
                digest(heading + body),
                True,
                s.title,
                s.level,
                s.base,
                heading,
                body,
                count_lines(heading + body),
            )
        )
    return rows


def reindex(previous: list[SectionRow], doc: Document) -> Reindex:
    """Compare the index's rows for a file with its new parse."""
    before = {row.key: row for row in previous}
    out: list[SectionRow] = []
    changed: list[str] = []
    for row in rows_for(doc):
        old = before.pop(row.key, None)
        if old is None:  # a new key: at rev 1 already
            out.append(row)
        elif old.present and old.hash == row.hash:
            out.append(row._replace(rev=old.rev))
            continue
        else:
            out.append(row._replace(rev=old.rev + 1))
        changed.append(row.key)
    for old in before.values():
        if old.present:
            out.append(old._replace(present=False, hash=None))
            changed.append(old.key)
    return Reindex(tuple(out), tuple(changed))
