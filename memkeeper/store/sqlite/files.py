"""The files, sections and bodies tables of the SQLite store: each managed file's state, its
sections' rows, and each section's recent bodies (the bases of three-way merges, kept by
``put_sections`` in the same statements' transaction).

Bodies are kept lazily, as the etcd store keeps them: a present section's current body is its
row's, so ``put_sections`` archives a body in ``bodies`` only when the section moves on from it
(a new rev, or gone) — indexing a new file writes the file's bytes once, into its rows; and
``body_at`` answers from ``bodies``, else from the row. Pruning follows ``store.bodies``.

A mixin of ``Store`` (it shares the one connection and its transactions). Call the writing
methods inside ``Store.writing()``. Only managed files' sections reach these tables: a private
file is never indexed, so its text is never kept.
"""

from __future__ import annotations

from memkeeper.records import FileState, SectionRow
from memkeeper.store.sqlite.core import SqliteCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_ROW_COLUMNS = "key, ord, rev, hash, present, title, level, base, heading, body, lines"
_COLS = _ROW_COLUMNS.split(", ")


def _row(values: tuple[Any, ...]) -> SectionRow:
    key, ord_, rev, cell, present, title, level, base, heading, body, lines = values
    hash_ = "sha256:" + cell.hex() if isinstance(cell, bytes) else cell
    return SectionRow(
        key, ord_, rev, hash_, bool(present), title, level, base, bytes(heading), bytes(body), lines
    )


def hash_cell(hash_: str | None) -> str | bytes | None:
    """A section's hash as its row stores it: a ``sha256:`` digest as its 32 bytes (71 as
    text, a third of a short section's row); anything else as given (``_row`` reads both)."""
    if hash_ is None or len(hash_) != 71 or not hash_.startswith("sha256:"):
        return hash_
    try:
        raw = bytes.fromhex(hash_[7:])
    except ValueError:
        return hash_
    return raw if raw.hex() == hash_[7:] else hash_


class FileRows(SqliteCore):
    def file_state(self, path: str) -> FileState | None:
        row = self._db.execute(
            "SELECT file_rev, file_hash FROM files WHERE path = ?", (path,)
        ).fetchone()
        return None if row is None else FileState(row[0], row[1])

    def indexed_section(self, path: str, key: str) -> tuple[FileState, SectionRow] | None:
        """The file's state and one present section, read together (one statement)."""
        row = self._db.execute(
            f"SELECT f.file_rev, f.file_hash, {', '.join('s.' + c for c in _COLS)} "
            "FROM files f JOIN sections s ON s.path = f.path "
            "WHERE f.path = ? AND s.key = ? AND s.present",
            (path, key),
        ).fetchone()
        return None if row is None else (FileState(row[0], row[1]), _row(row[2:]))

    def section_candidates(self, path: str, ref: str) -> list[tuple[FileState, SectionRow]]:
        """The file's state and each present section ``ref`` may name — its key, its base,
        or its key's last segment — in one statement (``refs.resolve_key`` decides)."""
        rows = self._db.execute(
            f"SELECT f.file_rev, f.file_hash, {', '.join('s.' + c for c in _COLS)} "
            "FROM files f JOIN sections s ON s.path = f.path "
            "WHERE f.path = ? AND s.present AND (s.key = ? OR s.base = ? OR "
            "substr(s.key, -?) = ?) ORDER BY s.ord",
            (path, ref, ref, len(ref) + 1, "/" + ref),
        ).fetchall()
        return [(FileState(row[0], row[1]), _row(row[2:])) for row in rows]

    def splice_context(self, path: str, ord_: int) -> tuple[int, bytes | None]:
        """What a patch of the section at ``ord_`` needs around it, in one statement: the
        size of the present sections before it and the heading of the one after (None)."""
        size, heading = self._db.execute(
            "SELECT (SELECT COALESCE(SUM(size), 0) FROM sections "
            "WHERE path = ? AND present AND ord < ?), "
            "(SELECT heading FROM sections WHERE path = ? AND present AND ord = ?)",
            (path, ord_, path, ord_ + 1),
        ).fetchone()
        return int(size), None if heading is None else bytes(heading)

    def section_keys(self, path: str) -> list[tuple[str, str]]:
        """``(key, base)`` of the file's present sections in document order."""
        return self._db.execute(
            "SELECT key, base FROM sections WHERE path = ? AND present ORDER BY ord", (path,)
        ).fetchall()

    def section_row(self, path: str, key: str) -> SectionRow | None:
        """The row of ``key``, present or absent (an append's new key may be one that left)."""
        row = self._db.execute(
            f"SELECT {_ROW_COLUMNS} FROM sections WHERE path = ? AND key = ?", (path, key)
        ).fetchone()
        return None if row is None else _row(row)

    def sections(self, path: str, *, with_absent: bool = False) -> list[SectionRow]:
        where = "" if with_absent else "AND present"
        rows = self._db.execute(
            f"SELECT {_ROW_COLUMNS} FROM sections WHERE path = ? {where} "
            "ORDER BY present DESC, ord",
            (path,),
        ).fetchall()
        return [_row(r) for r in rows]

    def indexed_paths(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT path FROM files ORDER BY path")]

    def file_hashes(self) -> dict[str, str]:
        """Every indexed file's hash, by path (one statement: a whole-repository look)."""
        return dict(self._db.execute("SELECT path, file_hash FROM files").fetchall())

    def section_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """How many present sections each of ``paths`` has (one without any is left out)."""
        wanted = set(paths)
        rows = self._db.execute(
            "SELECT path, COUNT(*) FROM sections WHERE present GROUP BY path"
        ).fetchall()
        return {path: count for path, count in rows if path in wanted}

    def put_file(self, path: str, state: FileState) -> None:
        self._db.execute(
            "INSERT INTO files (path, file_rev, file_hash) VALUES (?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET file_rev = excluded.file_rev, "
            "file_hash = excluded.file_hash",
            (path, state.file_rev, state.file_hash),
        )

    def put_sections(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Insert or replace these section rows of ``path``, archiving the body each one moves
        on from (and pruning the old ones when due)."""
        rows = list(rows)
        # A present row's body at its rev, replaced by another rev or by absence: archived.
        self._db.executemany(
            "INSERT OR IGNORE INTO bodies (path, key, rev, body) "
            "SELECT path, key, rev, body FROM sections "
            "WHERE path = ? AND key = ? AND present AND NOT (? AND rev = ?)",
            [(path, r.key, int(r.present), r.rev) for r in rows],
        )
        self._db.executemany(
            f"INSERT OR REPLACE INTO sections (path, {_ROW_COLUMNS}, size) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    r.key,
                    r.ord,
                    r.rev,
                    hash_cell(r.hash),
                    int(r.present),
                    r.title,
                    r.level,
                    r.base,
                    r.heading,
                    r.body,
                    r.lines,
                    len(r.heading) + len(r.body),
                )
                for r in rows
            ],
        )
        self._prune(path, rows)

    def keep_bodies(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Remember the body of each present row at its rev, forgetting the older ones when a
        prune is due (``store.bodies``)."""
        rows = list(rows)
        kept = [(path, r.key, r.rev, r.body) for r in rows if r.present]
        if not kept:
            return
        self._db.executemany(
            "INSERT OR IGNORE INTO bodies (path, key, rev, body) VALUES (?, ?, ?, ?)", kept
        )
        self._prune(path, rows)

    def _prune(self, path: str, rows: list[SectionRow]) -> None:
        from memkeeper.store.bodies import prune_cut  # a read never prunes

        cuts = [(path, r.key, prune_cut(r.rev)) for r in rows if r.present]
        due = [(p, k, cut) for p, k, cut in cuts if cut is not None]
        if due:
            self._db.executemany("DELETE FROM bodies WHERE path = ? AND key = ? AND rev <= ?", due)

    def body_at(self, path: str, key: str, rev: int) -> bytes | None:
        """The section's body at ``rev``, if it is still kept: archived, or its row's."""
        row = self._db.execute(
            "SELECT body FROM bodies WHERE path = ? AND key = ? AND rev = ? UNION ALL "
            "SELECT body FROM sections WHERE path = ? AND key = ? AND rev = ? AND present "
            "LIMIT 1",
            (path, key, rev, path, key, rev),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def keep_version(self, path: str, file_hash: str, file_rev: int) -> None:
        """A shared store's record of the versions a file had (``EtcdStore.keep_version``):
        one root's files are the local store's own, with no other versions to recognise."""

    def version_rev(self, path: str, file_hash: str) -> int | None:
        """As ``keep_version``: none here."""
        return None
