"""The etcd store's values, without an etcd: compact JSON with sorted keys and UTF-8 as it is;
bytes as their text or as base64; each record back as it went in, field for field; a claim's
lease and TTL, and none for a row from before leases."""

from __future__ import annotations

import base64
import json

from memkeeper import events as ev
from memkeeper.claims.decisions import Claim, Request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.coordination import Proposal
from memkeeper.records import SectionRow
from memkeeper.store.etcd import codec, keys

NOW = 1_700_000_000.0


def test_values_are_compact_json_with_sorted_keys_and_utf8_as_it_is() -> None:
    assert codec.encode({"b": [1, None], "a": "café"}) == '{"a":"café","b":[1,null]}'.encode()


def test_bytes_are_their_text_when_utf8_else_base64() -> None:
    assert codec.bytes_json("été\n".encode()) == "été\n"
    raw = b"\xff\xfe\x00"
    assert codec.bytes_json(raw) == {"b64": base64.b64encode(raw).decode()}
    for data in (b"", "été\n".encode(), raw):
        assert codec.json_bytes(json.loads(codec.encode(codec.bytes_json(data)))) == data


def test_a_section_row_comes_back_field_for_field() -> None:
    heading, body = b"# Build\n", b"\xffraw\n"
    row = SectionRow("build", 2, 5, ev.digest(heading + body), True, "Build", 1, "build", heading,
                     body, 3)  # fmt: skip
    stored = json.loads(codec.encode(codec.row_json(row)))
    assert stored[0:2] == [2, 5]  # ord, rev: the key is the section's, outside the list
    assert codec.row("build", stored) == row


def test_an_event_comes_back_with_the_id_of_its_key() -> None:
    made = ev.next_event(None, "2026-01-01T00:00:00.000Z", "a", "x", "C.md", None, {"é": 1})
    raw = codec.event_json(made)
    assert json.loads(raw)[0:3] == ["2026-01-01T00:00:00.000Z", "a", "x"]
    assert codec.event(b"/p/ev/" + keys.number(made.id).encode(), raw) == made


def test_a_proposal_keeps_its_body_bytes() -> None:
    prop = Proposal(3, "C.md", "build", 2, b"\xffmine\n", "a", "t", "open", None, None, None)
    assert codec.proposal(codec.proposal_json(prop)) == prop


def test_a_claim_carries_its_lease_and_one_from_before_leases_has_none() -> None:
    claim = Claim("c1", 7, "a", "write", ("CLAUDE.md#build",), 3, True, NOW, NOW + 30, "é")
    raw = codec.claim_json(claim, 4242, 32)
    assert codec.claim("c1", raw) == claim
    assert codec.claim_lease(raw) == (4242, 32)
    older = json.dumps(json.loads(raw)[:9]).encode()
    assert codec.claim("c1", older) == claim
    assert codec.claim_lease(older) is None
    assert codec.claim_lease(codec.claim_json(claim, 0, 0)) is None


def test_a_waiter_comes_back_with_its_request_and_its_wait() -> None:
    request = Request("w1", "b", "read", ("docs/",), 5, True, 90.0, "review", 4)
    waiter = WaiterRow(request, 4242, NOW + 30, "aborted", "deadlock")
    loaded = codec.waiter("w1", codec.waiter_json(waiter))
    assert loaded == waiter
    assert type(loaded.request.ttl) is float
