"""The claim records' index by state (format 5): each record again under
``P/crecs/<state>\\0<id>``; a format-4 prefix gets its index, compared batch by batch on
what it read, before it is marked 5."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memkeeper.claims import lifecycle as life
from memkeeper.claims.plan import Plan
from memkeeper.store.etcd import EtcdStore, recordindex
from memkeeper.store.etcd.keys import FORMAT_VERSION
from tests.store.etcd.conftest import NOW, claim, etcd_only, under

if TYPE_CHECKING:
    from tests.etcd_cluster import Cluster


def test_an_index_key_names_the_state_then_the_claim() -> None:
    assert recordindex.key(b"/mk/p/", "active", "c7") == b"/mk/p/crecs/active\0c7"
    assert recordindex.state_of(b'{"id": "c7", "state": "expired"}') == "expired"


@etcd_only
def test_a_format_4_prefix_gets_its_records_index_before_it_is_marked_8(
    cluster: Cluster, store: EtcdStore, prefix: bytes
) -> None:
    records = [life.open_record(claim(f"c{n}", n, NOW + 60), Plan(), f"t{n:03}") for n in
               range(1, 151)]  # fmt: skip
    records[7] = life.move(records[7], "abandoned", at="t", by="agent-a", ended_at=NOW)
    for r in records:
        store.gateway.put(prefix + b"crec/" + r.id.encode(), json.dumps(r.to_json()).encode())
    store.gateway.delete(prefix + b"crecs/", prefix + b"crecs0")  # as format 4 left it
    store.gateway.put(prefix + b"format", b"4")
    newer = EtcdStore(cluster.gateway(), prefix)
    try:
        assert [r.id for r in newer.claim_records(("abandoned",))] == ["c8"]
        assert len(newer.claim_records(("active",))) == 149
        assert len(under(newer, b"crecs/")) == 150
        assert newer.gateway.range(prefix + b"format")[1][0].value == b"%d" % FORMAT_VERSION
    finally:
        newer.close()
