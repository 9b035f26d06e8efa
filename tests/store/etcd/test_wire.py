"""The gateway's shapes: endpoints parsed (or refused by name), a prefix's end, keys as base64
and the records answers decode into."""

from __future__ import annotations

import pytest

from memkeeper.store.etcd.wire import KeyValue, TxnResult, b64, parse_endpoints, prefix_end


def test_endpoints_are_parsed_or_refused_by_name() -> None:
    assert parse_endpoints("127.0.0.1:2379, [::1]:2380") == [
        ("127.0.0.1", 2379),
        ("::1", 2380),
    ]
    with pytest.raises(ValueError, match="'nohost' is not HOST:PORT"):
        parse_endpoints("127.0.0.1:1,nohost")
    assert prefix_end(b"/a/") == b"/a0"
    assert prefix_end(b"a\xff") == b"b"


def test_an_answer_decodes_into_key_values_with_int_revisions() -> None:
    raw = {
        "succeeded": True,
        "header": {"revision": "12"},
        "responses": [
            {
                "response_range": {
                    "kvs": [{"key": b64(b"k"), "value": b64(b"v"), "mod_revision": "9"}]
                }
            },
            {"response_put": {}},
        ],
    }
    result = TxnResult(raw)
    assert (result.succeeded, result.revision) == (True, 12)
    ((kv,), nothing) = result.responses
    assert (kv.key, kv.value, kv.mod_revision) == (b"k", b"v", 9)
    assert nothing == []
    assert repr(KeyValue({"key": b64(b"x")})) == "KeyValue(b'x', mod_revision=0)"
