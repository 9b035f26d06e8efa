"""The reconciliations table of the SQLite store: hand edits of generated regions.

Not a mixin of ``Store``: ``Store.reconciliations``, loaded on first use (a read or a patch that
lands never uses it), on the store's connection and in its transactions. Call the writing
methods inside ``Store.writing()``.
"""

from __future__ import annotations

from memkeeper.store.sqlite.core import SqliteDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.coordination import Reconciliation


class ReconciliationRows(SqliteDomain):
    def open_reconciliation(
        self, path: str, region: str, human: str, generated: str, by: str, at: str
    ) -> tuple[Reconciliation, bool]:
        """The open reconciliation of a region, opened now (``True``) or refreshed with the
        latest texts (``False``): one region never has two open at once."""
        found = self._db.execute(
            f"SELECT {_columns()} FROM reconciliations "
            "WHERE path = ? AND region = ? AND resolution IS NULL",
            (path, region),
        ).fetchone()
        if found is not None:
            sql = "UPDATE reconciliations SET human = ?, generated = ? WHERE id = ?"
            self._db.execute(sql, (human, generated, found[0]))
            return _reconciliation(found)._replace(human=human, generated=generated), False
        cursor = self._db.execute(
            "INSERT INTO reconciliations (path, region, human, generated, opened_by, opened_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (path, region, human, generated, by, at),
        )
        assert cursor.lastrowid is not None
        row = (cursor.lastrowid, path, region, human, generated, by, at, None, None, None)
        return _reconciliation(row), True

    def reconciliations(
        self, *, resolved: bool = False, path: str | None = None
    ) -> list[Reconciliation]:
        """Open reconciliations by id (all of them with ``resolved=True``; only ``path``'s
        when given)."""
        where = ["resolution IS NULL"] if not resolved else []
        where += ["path = ?"] if path is not None else []
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        sql = f"SELECT {_columns()} FROM reconciliations {clause} ORDER BY id"
        params = () if path is None else (path,)
        return [_reconciliation(r) for r in self._db.execute(sql, params).fetchall()]

    def reconciliation(self, rec_id: int) -> Reconciliation | None:
        sql = f"SELECT {_columns()} FROM reconciliations WHERE id = ?"
        row = self._db.execute(sql, (rec_id,)).fetchone()
        return None if row is None else _reconciliation(row)

    def resolve_reconciliation(self, rec_id: int, resolution: str, by: str, at: str) -> None:
        self._db.execute(
            "UPDATE reconciliations SET resolution = ?, resolved_by = ?, resolved_at = ? "
            "WHERE id = ? AND resolution IS NULL",
            (resolution, by, at, rec_id),
        )


def _columns() -> str:
    # The records' module is loaded by the first use of the table: a read or a patch makes none.
    from memkeeper.coordination import Reconciliation

    return ", ".join(Reconciliation.__slots__)


def _reconciliation(row: tuple[Any, ...]) -> Reconciliation:
    from memkeeper.coordination import Reconciliation

    return Reconciliation(*row)
