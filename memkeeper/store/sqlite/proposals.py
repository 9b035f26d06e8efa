"""The proposals table of the SQLite store: the bodies of merges that could not land, kept
until applied or dropped (the bases of merges, each section's recent bodies, are ``files``').

Not a mixin of ``Store``: ``Store.proposals``, loaded on first use (a read or a patch that
lands never uses it), on the store's connection and in its transactions. Call the writing
methods inside ``Store.writing()``.
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.coordination import Proposal


class ProposalRows(SqliteDomain):
    def open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal:
        cursor = self._db.execute(
            "INSERT INTO proposals (path, section, base_rev, body, agent, opened_at, state) "
            "VALUES (?, ?, ?, ?, ?, ?, 'open')",
            (path, section, base_rev, body, agent, at),
        )
        assert cursor.lastrowid is not None
        return _proposal(
            (cursor.lastrowid, path, section, base_rev, body, agent, at, "open", None, None, None)
        )

    def proposals(self, *, closed: bool = False) -> list[Proposal]:
        """Open proposals by id (closed ones too with ``closed=True``)."""
        clause = "" if closed else "WHERE state = 'open'"
        sql = f"SELECT {_columns()} FROM proposals {clause} ORDER BY id"
        return [_proposal(r) for r in self._db.execute(sql).fetchall()]

    def proposal(self, proposal_id: int) -> Proposal | None:
        sql = f"SELECT {_columns()} FROM proposals WHERE id = ?"
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


def _columns() -> str:
    # The records' module is loaded by the first use of the table: a read or a patch makes none.
    from memkeeper.coordination import Proposal

    return ", ".join(Proposal.__slots__)


def _proposal(row: tuple[Any, ...]) -> Proposal:
    from memkeeper.coordination import Proposal

    values = list(row)
    values[4] = bytes(values[4])
    return Proposal(*values)
