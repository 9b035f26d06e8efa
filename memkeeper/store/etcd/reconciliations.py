"""Reconciliations in the etcd store (``keys``: ``P/rec/``, the open one of a region ``P/reco/``,
ids from ``P/seq/rec``). Not a mixin of ``EtcdStore``: ``EtcdStore.reconciliations``, loaded on
first use, through the store's core (its transactions, its raw access to keys)."""

from __future__ import annotations

import json

from memkeeper.coordination import Reconciliation
from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd.core import EtcdDomain


class ReconciliationKeys(EtcdDomain):
    def open_reconciliation(
        self, path: str, region: str, human: str, generated: str, by: str, at: str
    ) -> tuple[Reconciliation, bool]:
        """The open reconciliation of a region, opened now (``True``) or refreshed with the
        latest texts (``False``): one region never has two open at once."""
        result: tuple[Reconciliation, bool] = self._core._alone(
            self._open_reconciliation, path, region, human, generated, by, at
        )
        return result

    def _open_reconciliation(
        self, path: str, region: str, human: str, generated: str, by: str, at: str
    ) -> tuple[Reconciliation, bool]:
        open_key = self._core._key("reco", path, region)
        found = self._core._get(open_key)
        if found is not None:
            existing = self.reconciliation(int(found))
            if existing is not None:
                refreshed = existing._replace(human=human, generated=generated)
                self._core._put(
                    self._core._key("rec", keys.number(existing.id)), codec.encode(list(refreshed))
                )
                return refreshed, False
        rec_id = self._core._next_id("rec")
        opened = Reconciliation(rec_id, path, region, human, generated, by, at, None, None, None)
        self._core._put(self._core._key("rec", keys.number(rec_id)), codec.encode(list(opened)))
        self._core._put(open_key, str(rec_id).encode())
        return opened, True

    def reconciliations(
        self, *, resolved: bool = False, path: str | None = None
    ) -> list[Reconciliation]:
        """Open reconciliations by id (all of them with ``resolved=True``; only ``path``'s
        when given)."""
        out = []
        for _, raw in self._core._scan_prefix(self._core._key("rec", "")):
            rec = Reconciliation(*json.loads(raw))
            if (resolved or rec.resolution is None) and (path is None or rec.path == path):
                out.append(rec)
        return out

    def reconciliation(self, rec_id: int) -> Reconciliation | None:
        raw = self._core._get(self._core._key("rec", keys.number(rec_id)))
        return None if raw is None else Reconciliation(*json.loads(raw))

    def resolve_reconciliation(self, rec_id: int, resolution: str, by: str, at: str) -> None:
        self._core._alone(self._resolve_reconciliation, rec_id, resolution, by, at)

    def _resolve_reconciliation(self, rec_id: int, resolution: str, by: str, at: str) -> None:
        rec = self.reconciliation(rec_id)
        if rec is None or rec.resolution is not None:
            return
        done = rec._replace(resolution=resolution, resolved_by=by, resolved_at=at)
        self._core._put(self._core._key("rec", keys.number(rec_id)), codec.encode(list(done)))
        open_key = self._core._key("reco", rec.path, rec.region)
        if self._core._get(open_key) == str(rec_id).encode():
            self._core._delete(open_key)
