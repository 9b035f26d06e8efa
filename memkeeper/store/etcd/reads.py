"""What each identity last read of each section, in the etcd store
(``P/read/<reader>\\0<path>\\0<key>``: ``[rev, told]``, the rev it read and the last rev it was
told of), and which of them changed since: that reader's keys, and one get of each file's
section rows (``P/sec/<path>``). A mixin of ``EtcdStore``."""

from __future__ import annotations

import json

from memkeeper.coordination import StaleRead
from memkeeper.store.etcd import codec
from memkeeper.store.etcd.core import EtcdCore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class ReadKeys(EtcdCore):
    def _reads(self, reader: str, path: str | None) -> dict[tuple[str, str], list[int]]:
        start = self._key("read", reader, "" if path is None else path + "\0")
        found = {}
        for key, value in self._scan_prefix(start):
            _, where, section = key.decode().split("\0")
            found[where, section] = json.loads(value)
        return found

    def reads_of(self, reader: str, path: str) -> dict[str, int]:
        """The rev ``reader`` last read of each section of ``path`` it read."""
        return {key: rev for (_, key), (rev, _) in self._reads(reader, path).items()}

    def record_reads(self, reader: str, path: str, revs: Mapping[str, int]) -> None:
        """``reader`` read these sections of ``path`` at these revs (nothing to tell it of)."""
        self._alone(self._record_reads, reader, path, dict(revs))

    def _record_reads(self, reader: str, path: str, revs: dict[str, int]) -> None:
        held = self._reads(reader, path)
        for key, rev in revs.items():
            was, told = held.get((path, key), (0, 0))
            value = [max(rev, was), max(rev, told)]
            self._put(self._key("read", reader, path, key), codec.encode(value))

    def stale_reads(self, reader: str) -> list[StaleRead]:
        """The sections ``reader`` read that changed past the last rev it was told of."""
        files: dict[str, dict[str, list[Any]]] = {}
        out = []
        for (path, key), (rev, told) in self._reads(reader, None).items():
            if path not in files:
                raw = self._get(self._key("sec", path))
                files[path] = {} if raw is None else json.loads(raw)
            now = files[path].get(key)  # [ord, rev, hash, present, …] (``codec.row``)
            if now is not None and now[1] > told:
                out.append((path, now[0], StaleRead(path, key, rev, told, now[1], now[3])))
        return [stale for *_, stale in sorted(out, key=lambda o: (o[0], o[1], o[2].key))]

    def tell_read(self, reader: str, path: str, key: str, rev: int) -> bool:
        """Remember that ``reader`` was told of ``rev``: False when it already was."""
        result: bool = self._alone(self._tell_read, reader, path, key, rev)
        return result

    def _tell_read(self, reader: str, path: str, key: str, rev: int) -> bool:
        where = self._key("read", reader, path, key)
        raw = self._get(where)
        if raw is None or json.loads(raw)[1] >= rev:
            return False
        self._put(where, codec.encode([json.loads(raw)[0], rev]))
        return True
