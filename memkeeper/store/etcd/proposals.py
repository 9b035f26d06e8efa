"""Proposals in the etcd store (``keys``: ``P/prop/``, ids from ``P/seq/prop``). Not a mixin of
``EtcdStore``: ``EtcdStore.proposals``, loaded on first use, through the store's core (its
transactions, its raw access to keys)."""

from __future__ import annotations

from memkeeper.coordination import Proposal
from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd.core import EtcdDomain


class ProposalKeys(EtcdDomain):
    def open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal:
        result: Proposal = self._core._alone(
            self._open_proposal, path, section, base_rev, body, agent, at
        )
        return result

    def _open_proposal(
        self, path: str, section: str, base_rev: int, body: bytes, agent: str, at: str
    ) -> Proposal:
        prop_id = self._core._next_id("prop")
        prop = Proposal(prop_id, path, section, base_rev, body, agent, at, "open", None, None, None)
        self._core._put(self._core._key("prop", keys.number(prop_id)), codec.proposal_json(prop))
        return prop

    def proposals(self, *, closed: bool = False) -> list[Proposal]:
        """Open proposals by id (closed ones too with ``closed=True``)."""
        found = [
            codec.proposal(raw) for _, raw in self._core._scan_prefix(self._core._key("prop", ""))
        ]
        return [p for p in found if closed or p.state == "open"]

    def proposal(self, proposal_id: int) -> Proposal | None:
        raw = self._core._get(self._core._key("prop", keys.number(proposal_id)))
        return None if raw is None else codec.proposal(raw)

    def close_proposal(
        self, proposal_id: int, state: str, by: str, at: str, rev: int | None = None
    ) -> None:
        """Mark an open proposal ``applied`` (landing as ``rev``) or ``dropped``."""
        self._core._alone(self._close_proposal, proposal_id, state, by, at, rev)

    def _close_proposal(
        self, proposal_id: int, state: str, by: str, at: str, rev: int | None
    ) -> None:
        prop = self.proposal(proposal_id)
        if prop is None or prop.state != "open":
            return
        done = prop._replace(state=state, closed_by=by, closed_at=at, rev=rev)
        self._core._put(
            self._core._key("prop", keys.number(proposal_id)), codec.proposal_json(done)
        )
