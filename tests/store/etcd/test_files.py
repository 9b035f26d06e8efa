"""The files, sections, bodies and versions of the etcd store (``P/file/``, ``P/sec/``,
``P/body/``, ``P/ver/``): a file is two keys of compact JSON; a body is archived only once its
section moves on; a version read in a block is left out of its comparisons."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from tests.store.etcd.conftest import (
    STATE,
    etcd_only,
    key,
    n20,
    row,
    stored,
    under,
)

if TYPE_CHECKING:
    from memkeeper.store.etcd import EtcdStore


@etcd_only
def test_a_file_is_two_keys_of_compact_json_its_state_and_all_its_sections(
    store: EtcdStore,
) -> None:
    rows = [row("café", 0), row("raw", 1, 2, b"\xff\xfe\n"), row("gone", 2, 4, b"", present=False)]
    with store.writing():
        store.put_file("docs/a.md", STATE)
        store.put_sections("docs/a.md", rows)
    keys = stored(store)
    # A new file archives no body (P/format: the store's first request put it).
    assert set(keys) == {b"file/docs/a.md", b"sec/docs/a.md", b"format"}
    assert keys[b"file/docs/a.md"] == f'[3,"{STATE.file_hash}"]'.encode()
    raw = keys[b"sec/docs/a.md"]
    assert b", " not in raw
    assert b": " not in raw
    assert "Café".encode() in raw  # UTF-8 as it is, not \u escapes
    sections = json.loads(raw)
    assert list(sections) == ["café", "gone", "raw"]
    fields = [0, 1, rows[0].hash, True, "Café", 1, "café", "# café\n", "text\n", 2]
    assert sections["café"] == fields  # ord, rev, hash, present, title … body, lines
    assert sections["raw"][8] == {"b64": base64.b64encode(b"\xff\xfe\n").decode()}  # not UTF-8
    assert sections["gone"][2:4] == [None, False]
    assert store.sections("docs/a.md", with_absent=True) == [rows[0], rows[1], rows[2]]


@etcd_only
def test_a_body_is_archived_at_its_rev_only_once_its_section_moves_on(store: EtcdStore) -> None:
    def bodies() -> dict[bytes, Any]:
        return {k: json.loads(v) for k, v in under(store, b"body/").items()}

    store.put_sections("m.md", [row("log", 0, 1, b"one\n")])
    store.put_sections("m.md", [row("log", 0, 1, b"one\n")])  # the same rev again
    assert bodies() == {}
    assert store.body_at("m.md", "log", 1) == b"one\n"  # answered from the row
    store.put_sections("m.md", [row("log", 0, 2, b"\xfftwo\n")])
    assert bodies() == {key("body/m.md", "log", n20(1)): "one\n"}
    store.put_sections("m.md", [row("log", 0, 2, b"", present=False)])  # gone: archived too
    assert bodies() == {
        key("body/m.md", "log", n20(1)): "one\n",
        key("body/m.md", "log", n20(2)): {"b64": base64.b64encode(b"\xfftwo\n").decode()},
    }
    assert store.body_at("m.md", "log", 2) == b"\xfftwo\n"


@etcd_only
def test_a_version_read_in_a_block_is_left_out_of_its_comparisons(
    store: EtcdStore, other: EtcdStore
) -> None:
    store.keep_version("C.md", "sha256:old", 1)
    with store.writing():
        assert store.version_rev("C.md", "sha256:old") == 1
        other.keep_version("C.md", "sha256:old", 5)  # the file went back to those bytes
        store.put_file("C.md", STATE)
    assert store.file_state("C.md") == STATE
    assert store.version_rev("C.md", "sha256:old") == 5
