"""The files, sections, bodies and versions of the etcd store (``keys``: ``P/file/``,
``P/sec/``, ``P/body/``, ``P/ver/``). A mixin of ``EtcdStore``.

Bodies are kept lazily: the current body of each present section is its row's, so a put of
rows archives a body under ``P/body/`` only when the section moves on from it (a new rev, or
gone) — indexing a new file writes no body key; ``body_at`` answers from the row first.
Pruning follows SQLite's rule (``store.bodies``) with one range delete.
"""

from __future__ import annotations

import json

from memkeeper.records import FileState
from memkeeper.store.bodies import prune_cut
from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd.core import EtcdCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.records import SectionRow

KEEP_VERSIONS = 256  # the versions of a file ``version_rev`` knows: its last revs …
PRUNE_VERSIONS = 64  # … the older ones forgotten every this many revs


class FileKeys(EtcdCore):
    def file_state(self, path: str) -> FileState | None:
        raw = self._get(self._key("file", path))
        if raw is None:
            return None
        rev, hash_ = json.loads(raw)
        return FileState(rev, hash_)

    def _rows(self, path: str) -> dict[str, SectionRow]:
        key = self._key("sec", path)
        raw = self._get(key)
        if raw is None:
            return {}
        memo = self._decoded.get(key)
        if memo is not None and memo[0] == raw:
            return memo[1]
        rows = {k: codec.row(k, v) for k, v in json.loads(raw).items()}
        self._decoded[key] = (raw, rows)
        return rows

    def _present(self, path: str) -> list[SectionRow]:
        return sorted((r for r in self._rows(path).values() if r.present), key=lambda r: r.ord)

    def indexed_section(self, path: str, key: str) -> tuple[FileState, SectionRow] | None:
        """The file's state and one present section, read together (one snapshot)."""
        with self.reading():
            state = self.file_state(path)
            row = None if state is None else self._rows(path).get(key)
        if state is None or row is None or not row.present:
            return None
        return state, row

    def section_candidates(self, path: str, ref: str) -> list[tuple[FileState, SectionRow]]:
        """The file's state and each present section ``ref`` may name — its key, its base,
        or its key's last segment — in document order (``refs.resolve_key`` decides)."""
        with self.reading():
            state = self.file_state(path)
            rows = [] if state is None else self._present(path)
        if state is None:
            return []
        tail = "/" + ref
        return [(state, r) for r in rows if r.key == ref or r.base == ref or r.key.endswith(tail)]

    def splice_context(self, path: str, ord_: int) -> tuple[int, bytes | None]:
        """The size of the present sections before ``ord_`` and the heading of the one after."""
        rows = self._present(path)
        size = sum(len(r.heading) + len(r.body) for r in rows if r.ord < ord_)
        after = next((r.heading for r in rows if r.ord == ord_ + 1), None)
        return size, after

    def section_keys(self, path: str) -> list[tuple[str, str]]:
        """``(key, base)`` of the file's present sections in document order."""
        return [(r.key, r.base) for r in self._present(path)]

    def section_row(self, path: str, key: str) -> SectionRow | None:
        """The row of ``key``, present or absent (an append's new key may be one that left)."""
        return self._rows(path).get(key)

    def sections(self, path: str, *, with_absent: bool = False) -> list[SectionRow]:
        rows = [r for r in self._rows(path).values() if with_absent or r.present]
        return sorted(rows, key=lambda r: (not r.present, r.ord, r.key))

    def indexed_paths(self) -> list[str]:
        start = self._key("file", "")
        return [k[len(start) :].decode() for k, _ in self._scan_prefix(start)]

    def file_hashes(self) -> dict[str, str]:
        """Every indexed file's hash, by path (one range read)."""
        start = self._key("file", "")
        return {
            key[len(start) :].decode(): json.loads(raw)[1] for key, raw in self._scan_prefix(start)
        }

    def section_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """How many present sections each of ``paths`` has (one without any is left out):
        a read of each file's rows, which hold its sections' bodies too."""
        with self.reading():
            counts = {path: len(self._present(path)) for path in paths}
        return {path: count for path, count in counts.items() if count}

    def put_file(self, path: str, state: FileState) -> None:
        self._alone(self._put_file, path, state)

    def _put_file(self, path: str, state: FileState) -> None:
        self._put(self._key("file", path), codec.encode([state.file_rev, state.file_hash]))

    def put_sections(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Insert or replace these section rows of ``path`` (and keep their bodies)."""
        self._alone(self._put_sections, path, list(rows))

    def _put_sections(self, path: str, rows: list[SectionRow]) -> None:
        current = dict(self._rows(path))
        for row in rows:
            old = current.get(row.key)
            if old is not None and old.present and not (row.present and row.rev == old.rev):
                self._keep_body(path, old.key, old.rev, old.body)  # it moves on from this body
            current[row.key] = row
        self._prune(path, rows)
        encoded = {k: codec.row_json(r) for k, r in current.items()}
        self._put(self._key("sec", path), codec.encode(encoded))

    # -- bodies -----------------------------------------------------------------------------

    def keep_bodies(self, path: str, rows: Iterable[SectionRow]) -> None:
        """Remember the body of each present row at its rev, forgetting those more than
        ``KEEP_BODIES`` revs older every ``PRUNE_EVERY`` revs (``store.bodies``)."""
        self._alone(self._keep_bodies, path, list(rows))

    def _keep_bodies(self, path: str, rows: list[SectionRow]) -> None:
        for row in rows:
            if row.present:
                self._keep_body(path, row.key, row.rev, row.body)
        self._prune(path, rows)

    def _keep_body(self, path: str, key: str, rev: int, body: bytes) -> None:
        """A body at a rev is that rev's for good: putting it again writes the same value,
        which spares the read an INSERT OR IGNORE would need (a round trip)."""
        self._put(
            self._key("body", path, key, keys.number(rev)), codec.encode(codec.bytes_json(body))
        )

    def _prune(self, path: str, rows: list[SectionRow]) -> None:
        for row in rows:
            cut = prune_cut(row.rev)
            if row.present and cut is not None:
                start = self._key("body", path, row.key, "")
                end = self._key("body", path, row.key, keys.number(cut + 1))
                assert self._txn is not None
                self._txn.delete_range(start, end)

    def body_at(self, path: str, key: str, rev: int) -> bytes | None:
        """The section's body at ``rev``, if it is still kept."""
        with self.reading():
            raw = self._get(self._key("body", path, key, keys.number(rev)))
            if raw is not None:
                return codec.json_bytes(json.loads(raw))
            row = self._rows(path).get(key)
        return row.body if row is not None and row.present and row.rev == rev else None

    # -- versions ---------------------------------------------------------------------------

    def keep_version(self, path: str, file_hash: str, file_rev: int) -> None:
        """Remember that ``path`` was, at ``file_rev``, the bytes hashing to ``file_hash``: a
        root whose file holds that version (a checkout, a clone made earlier) is behind, not
        edited. The last ``KEEP_VERSIONS`` revs are kept; every ``PRUNE_VERSIONS`` revs the
        older ones go (a range read and at most ``PRUNE_VERSIONS`` deletes, in this block)."""
        self._alone(self._keep_version, path, file_hash, file_rev)

    def _keep_version(self, path: str, file_hash: str, file_rev: int) -> None:
        self._put(self._key("ver", path, file_hash), str(file_rev).encode())
        cut = file_rev - KEEP_VERSIONS
        if cut > 0 and file_rev % PRUNE_VERSIONS == 0:
            for key, raw in self._scan_prefix(self._key("ver", path, "")):
                if int(raw) <= cut:
                    self._delete(key)

    def version_rev(self, path: str, file_hash: str) -> int | None:
        """The ``file_rev`` at which ``path`` held ``file_hash``'s bytes, while it is kept."""
        raw = self._get(self._key("ver", path, file_hash), track=False)
        return None if raw is None else int(raw)
