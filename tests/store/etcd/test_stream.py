"""The watch stream's decoding (pure): the gateway's chunked body cut anywhere decodes to the
same responses; a stream that is not a watch's is refused; and the revision a moved stream
resumes from never skips an event nor repeats one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.store.etcd import stream as ws
from memkeeper.store.etcd.wire import b64

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


def response(revision: int, *mods: int, created: bool = False) -> dict[str, object]:
    result: dict[str, object] = {"header": {"revision": str(revision)}}
    if created:
        result["created"] = True
    if mods:
        result["events"] = [
            {"kv": {"key": b64(f"k{m}".encode()), "mod_revision": str(m)}} for m in mods
        ]
    return {"result": result}


def chunked(*answers: dict[str, object]) -> bytes:
    body = b""
    for answer in answers:
        line = json.dumps(answer).encode() + b"\n"
        body += f"{len(line):x}\r\n".encode() + line + b"\r\n"
    return body


def decode(data: bytes, cuts: list[int]) -> tuple[ws.Framing, list[ws.WatchResponse]]:
    framing, found, last = ws.Framing(), [], 0
    for cut in [*sorted(cuts), len(data)]:
        framing, more = ws.feed(framing, data[last:cut])
        found += more
        last = cut
    return framing, found


STREAM = HEAD + chunked(response(7, created=True), response(8, 8), response(10, 9, 10))


@given(st.lists(st.integers(0, len(STREAM)), max_size=12))
def test_a_stream_cut_anywhere_decodes_to_the_same_responses(cuts: list[int]) -> None:
    framing, found = decode(STREAM, cuts)
    assert [r.created for r in found] == [True, False, False]
    assert [[kv.mod_revision for _, kv in r.events] for r in found] == [[], [8], [9, 10]]
    assert [r.revision for r in found] == [7, 8, 10]
    assert framing.headed
    assert not framing.ended


def test_the_final_chunk_ends_the_stream() -> None:
    framing, found = decode(STREAM + b"0\r\n\r\n", [])
    assert framing.ended
    assert len(found) == 3


def test_a_response_split_over_two_chunks_is_one_response() -> None:
    line = json.dumps(response(8, 8)).encode() + b"\n"
    body = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in (line[:10], line[10:]))
    _, found = decode(HEAD + body, [len(HEAD) + 5])
    assert [[kv.key for _, kv in r.events] for r in found] == [[b"k8"]]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"HTTP/1.1 404 Not Found\r\n\r\n{}", "not 200"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not 200"),
        (HEAD + b"zz\r\n", "a chunk size"),
        (HEAD + b"3\r\n{x\n\r\n", "not JSON"),
        (HEAD + b"3\r\n[]\n\r\n", "not an object"),
    ],
)
def test_what_is_not_a_watch_stream_is_refused(data: bytes, says: str) -> None:
    with pytest.raises(ws.StreamError, match=says):
        ws.feed(ws.Framing(), data)


def test_a_cancellation_says_its_compact_revision_and_an_error_is_a_cancellation() -> None:
    compacted = ws.parse(b'{"result": {"canceled": true, "compact_revision": "5"}}')
    assert compacted.canceled
    assert compacted.compact_revision == 5
    failed = ws.parse(b'{"error": {"grpc_code": 14, "message": "no leader"}}')
    assert failed.canceled
    assert failed.reason == "no leader"


def parsed(answer: dict[str, object]) -> ws.WatchResponse:
    return ws.parse(json.dumps(answer).encode())


def test_resume_goes_past_the_last_event_and_past_a_progress_notification() -> None:
    assert ws.resume(5, parsed(response(12, 6, 9))) == 10
    assert ws.resume(5, parsed(response(12))) == 13  # progress: nothing up to 12 is left
    assert ws.resume(5, parsed(response(12, created=True))) == 5  # its events come after it
    assert ws.resume(20, parsed(response(12, 6))) == 20  # never back


def test_events_before_the_resume_revision_are_not_delivered_again() -> None:
    answer = parsed(response(12, 8, 9, 10))
    assert [kv.mod_revision for _, kv in ws.fresh(answer, 9)] == [9, 10]


@given(st.lists(st.integers(1, 30), min_size=1, max_size=20), st.data())
def test_a_stream_moved_anywhere_delivers_each_revision_once_in_order(
    revisions: list[int], data: st.DataObject
) -> None:
    """Every member sends the same history; the stream moves to another after any response,
    and the new member resends from ``start`` or from anywhere before it: what is delivered
    is every revision once, in order."""
    history = sorted(set(revisions))
    answers = [parsed(response(r, r)) for r in history]
    start, delivered, read = history[0], list[int](), 0
    while read < len(answers):
        replay = data.draw(st.integers(0, read))
        moved = data.draw(st.integers(read + 1, len(answers)))
        for answer in answers[replay:moved]:
            delivered += [kv.mod_revision for _, kv in ws.fresh(answer, start)]
            start = ws.resume(start, answer)
        read = moved
    assert delivered == history
    assert start == history[-1] + 1
