"""The event log's index by type (format 6): ``P/evy/<type>\\0<id>`` holds the event's path;
a prefix of format 5 is marked 6 with ``P/evyfrom``, the last event not in the index, read
by walking the log back past it; an older memkeeper's append during the mark moves it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.store.etcd import EtcdStore, typeindex
from memkeeper.store.etcd import gateway as etcdgw
from tests.store.etcd.conftest import TS, Interrupted, etcd_only, key, n20, stored, under

if TYPE_CHECKING:
    from memkeeper.records import Event
    from tests.etcd_cluster import Cluster


def test_an_index_key_names_the_type_then_the_id() -> None:
    assert typeindex.key(b"/mk/p/", "entry.appended", 7) == b"/mk/p/evy/entry.appended\0" + (
        b"0" * 19 + b"7"
    )


def _format_5_log(store: EtcdStore, prefix: bytes, count: int) -> list[Event]:
    """``count`` events as a format-5 memkeeper left them: no ``P/evy/`` keys."""
    for n in range(count):
        kind = "entry.appended" if n % 4 == 0 else "section.patched"
        store.append_event(TS[n % 5], "a", kind, "m/d.md" if n % 2 else "x.md", None, {"n": n})
    store.gateway.delete(prefix + b"evy/", etcdgw.prefix_end(prefix + b"evy/"))
    store.gateway.put(prefix + b"format", b"5")
    return store.events()


@etcd_only
def test_a_format_5_prefix_is_marked_6_with_where_its_index_starts_and_reads_back_past_it(
    cluster: Cluster, store: EtcdStore, prefix: bytes
) -> None:
    old = _format_5_log(store, prefix, 150)
    newer = EtcdStore(cluster.gateway(), prefix)
    try:
        newer.append_event(TS[0], "b", "entry.appended", "m/d.md", None, {})
        newer.append_event(TS[0], "b", "section.patched", "x.md", None, {})
        assert stored(newer)[b"format"] == b"6"
        assert stored(newer)[b"evyfrom"] == b"150"  # nothing backfilled
        assert set(under(newer, b"evy/")) == {
            key("evy/entry.appended", n20(151)),
            key("evy/section.patched", n20(152)),
        }
        appended = [e.id for e in reversed(old) if e.type == "entry.appended"]
        found = newer.recent_events(("entry.appended",), None, None, 4)
        assert [e.id for e in found] == [151, *appended[:3]]  # the index, then the log
        about = [e.id for e in reversed(old) if e.path == "m/d.md"]
        found = newer.recent_events(("section.patched", "entry.appended"), "m", None, 3)
        assert [e.id for e in found] == [151, *about[:2]]
        assert [e.id for e in newer.recent_events(("entry.appended",), None, 100, 2)] == [
            i for i in appended if i < 100
        ][:2]
        everything = newer.recent_events(("entry.appended",), None, None, 1000)
        assert [e.id for e in everything] == [151, *appended]
    finally:
        newer.close()


@etcd_only
def test_an_append_by_an_older_memkeeper_during_the_mark_moves_where_the_index_starts(
    cluster: Cluster, store: EtcdStore, prefix: bytes
) -> None:
    _format_5_log(store, prefix, 3)
    older = EtcdStore(cluster.gateway(), prefix)
    older._format_checked = True  # as a format-5 memkeeper, which reads no further

    def meanwhile() -> None:
        older.append_event(TS[1], "old", "entry.appended", None, None, {})

    gateway = Interrupted(cluster.endpoints, meanwhile, cluster.access)
    gateway.times = 1
    newer = EtcdStore(gateway, prefix)
    try:
        newer.check_format()
        assert stored(newer)[b"format"] == b"6"
        assert stored(newer)[b"evyfrom"] == b"4"  # the event appended meanwhile counted
        assert [e.actor for e in newer.recent_events(("entry.appended",), None, None, 1)] == ["old"]
    finally:
        newer.close()
        older.close()
