"""The tables of the state store that merges need: recent bodies of each section (the bases of
three-way merges) and proposals (bodies kept when a merge could not land).

A mixin of ``Store`` (it shares the one connection and its transactions). Call the writing
methods inside ``Store.writing()``. Only managed files' sections reach these tables: a private
file is never indexed, so its text is never kept.
"""

from __future__ import annotations

from memkeeper.coordination import Proposal

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable
    from typing import Any

    from memkeeper.records import SectionRow

KEEP_BODIES = 100  # bodies kept per section: revs N-99 … N, at least
PRUNE_EVERY = 16  # revs between prunes of a section's old bodies


class ProposalRows:
    _db: sqlite3.Connection

    def keep_bodies(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Remember the body of each present row at its rev, forgetting those more than
        ``KEEP_BODIES`` revs older — every ``PRUNE_EVERY`` revs (one statement less per
        write), so between ``KEEP_BODIES`` and ``KEEP_BODIES + PRUNE_EVERY - 1`` are kept."""
        kept = [(path, r.key, r.rev, r.body) for r in rows if r.present]
        if not kept:
            return
        self._db.executemany(
            "INSERT OR IGNORE INTO bodies (path, key, rev, body) VALUES (?, ?, ?, ?)", kept
        )
        old = [(p, k, rev - KEEP_BODIES) for p, k, rev, _ in kept if rev > KEEP_BODIES]
        due = [entry for entry in old if entry[2] % PRUNE_EVERY == 0]
        if due:
            self._db.executemany("DELETE FROM bodies WHERE path = ? AND key = ? AND rev <= ?", due)

    def body_at(self, path: str, key: str, rev: int) -> bytes | None:
        """The section's body at ``rev``, if it is still kept."""
        row = self._db.execute(
            "SELECT body FROM bodies WHERE path = ? AND key = ? AND rev = ?", (path, key, rev)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal:
        cursor = self._db.execute(
            "INSERT INTO proposals (path, section, base_rev, body, agent, opened_at, state) "
            "VALUES (?, ?, ?, ?, ?, ?, 'open')",
            (path, section, base_rev, body, agent, at),
        )
        assert cursor.lastrowid is not None
        return Proposal(
            cursor.lastrowid, path, section, base_rev, body, agent, at, "open", None, None, None
        )

    def proposals(self, *, closed: bool = False) -> list[Proposal]:
        """Open proposals by id (closed ones too with ``closed=True``)."""
        clause = "" if closed else "WHERE state = 'open'"
        sql = f"SELECT {_COLUMNS} FROM proposals {clause} ORDER BY id"
        return [_proposal(r) for r in self._db.execute(sql).fetchall()]

    def proposal(self, proposal_id: int) -> Proposal | None:
        sql = f"SELECT {_COLUMNS} FROM proposals WHERE id = ?"
        row = self._db.execute(sql, (proposal_id,)).fetchone()
        return None if row is None else _proposal(row)

    def close_proposal(
        self, proposal_id: int, state: str, by: str, at: str, rev: int | None = None
    ) -> None:
        """Mark an open proposal ``applied`` (landing as ``rev``) or ``dropped``."""
        self._db.execute(
            "UPDATE proposals SET state = ?, closed_by = ?, closed_at = ?, rev = ? "
            "WHERE id = ? AND state = 'open'",
            (state, by, at, rev, proposal_id),
        )


_COLUMNS = ", ".join(Proposal.__slots__)


def _proposal(row: tuple[Any, ...]) -> Proposal:
    values = list(row)
    values[4] = bytes(values[4])
    return Proposal(*values)
