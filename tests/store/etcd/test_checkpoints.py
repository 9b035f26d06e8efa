"""The event chain's checkpoints in the etcd store: one key per kind; a compaction removes the
events and every index key that names them (by type, by path, by claim) in one transaction,
leaving a path's last-event key, which readers skip once its event is gone."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memkeeper import checkpoints
from memkeeper.identity import keys
from tests.store.etcd.conftest import TS, etcd_only, key, n20, under

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore

KEY = keys.Signer("alice", bytes(range(32)))


@etcd_only
def test_a_checkpoint_is_one_key_of_json(store: EtcdStore) -> None:
    cp = checkpoints.make(checkpoints.VERIFIED, (2, "sha256:b"), TS[0], "human", None, KEY.sign)
    store.put_chain_checkpoint(cp)
    (raw,) = under(store, b"chk/").items()
    assert raw[0] == b"chk/verified"
    assert json.loads(raw[1])["seq"] == 2


@etcd_only
def test_a_compaction_removes_the_events_and_their_index_keys(store: EtcdStore) -> None:
    with store.writing():
        store.append_event(TS[0], "a", "section.patched", "C.md", "build", {"reason": "m"})
        store.append_event(TS[1], "a", "claim.released", None, None, {"id": "c7"})
        store.append_event(TS[2], "a", "file.indexed", "C.md", None, {})
    with store.writing():
        assert store.compact_events(2) == 2
    assert list(under(store, b"ev/")) == [key("ev/" + n20(3))]
    assert list(under(store, b"evt/")) == [key("evt/file.indexed", TS[2], n20(3))]
    assert list(under(store, b"evp/")) == [key("evp/C.md", "-", n20(3))]
    assert under(store, b"evc/") == {}
    # The last event about C.md#build is gone: its key stays, and is skipped.
    assert key("evl/C.md", "+build") in under(store, b"evl/")
    assert set(store.last_events("C.md")) == {None}


@etcd_only
def test_a_compaction_of_a_few_dozen_events_fits_one_transaction(store: EtcdStore) -> None:
    for n in range(31):
        store.append_event(TS[0], "a", "section.patched", f"f{n % 3}.md", "k", {})
    with store.writing():
        assert store.compact_events(30) == 30
    assert [e.id for e in store.events()] == [31]
