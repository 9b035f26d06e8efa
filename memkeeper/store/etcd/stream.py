"""An etcd watch stream as the JSON gateway sends it, decoded (pure): the HTTP head, the
chunks of its chunked body, one JSON watch response a line, and the revision a stream moved
to another member resumes from.

The gateway answers ``POST /v3/watch`` with ``200`` and ``Transfer-Encoding: chunked``; each
chunk holds one response and a newline: first ``created``, then the events of each revision
(all of one revision in one response), a cancellation last (``compact_revision`` set: the
start revision was compacted). ``feed`` takes the bytes as they come off the socket, in any
cuts, and returns the responses complete so far.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from memkeeper.store.etcd.wire import KeyValue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Event = tuple[str, KeyValue]


class StreamError(ValueError):
    """The stream is not a watch stream: another status, a broken chunk, a line not JSON."""


@dataclass(frozen=True, slots=True)
class WatchResponse:
    """One response of a watch stream."""

    revision: int  # the member's revision when it sent it
    events: tuple[Event, ...] = ()  # ``PUT`` or ``DELETE`` and the key
    created: bool = False
    canceled: bool = False
    compact_revision: int = 0  # canceled because the start revision was compacted
    reason: str = ""  # why it was canceled


@dataclass(frozen=True, slots=True)
class Framing:
    """What has come of a stream so far: bytes not yet decoded, and whether the head (the
    status line and the headers) and the final chunk were read."""

    pending: bytes = b""
    headed: bool = False
    ended: bool = False
    lines: bytes = b""  # chunk payloads not yet ended by a newline


def feed(framing: Framing, data: bytes) -> tuple[Framing, list[WatchResponse]]:
    """``framing`` after ``data`` and the responses it completed (``StreamError``: not a
    watch stream)."""
    pending = framing.pending + data
    headed = framing.headed
    if not headed:
        split = _head(pending)
        if split is None:
            return replace(framing, pending=pending), []
        headed, pending = True, split
    payloads, pending, ended = chunks(pending)
    complete, rest = lines(framing.lines + b"".join(payloads))
    responses = [parse(line) for line in complete if line.strip()]
    return Framing(pending, headed, framing.ended or ended, rest), responses


def _head(buffer: bytes) -> bytes | None:
    """What follows the head, once it is whole (``StreamError`` unless ``200``)."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > 65536:
            raise StreamError("watch: an HTTP head over 64 KiB")
        return None
    status_line = buffer.split(b"\r\n", 1)[0]
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or parts[1] != b"200":
        raise StreamError(f"watch: {status_line[:200].decode('latin-1')!r}: not 200")
    return buffer[end + 4 :]


def chunks(buffer: bytes) -> tuple[list[bytes], bytes, bool]:
    """The payloads of the complete chunks at the start of ``buffer``, what is left after
    them, and whether the final (empty) chunk was among them."""
    payloads: list[bytes] = []
    while True:
        eol = buffer.find(b"\r\n")
        if eol < 0:
            return payloads, buffer, False
        size_text = buffer[:eol].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise StreamError(f"watch: a chunk size {size_text[:20]!r}") from None
        if size == 0:
            return payloads, b"", True  # (trailers, if any, say nothing we need)
        end = eol + 2 + size
        if len(buffer) < end + 2:
            return payloads, buffer, False
        payloads.append(buffer[eol + 2 : end])
        buffer = buffer[end + 2 :]


def lines(buffer: bytes) -> tuple[list[bytes], bytes]:
    """The complete lines of ``buffer`` (without their newline) and the rest."""
    *complete, rest = buffer.split(b"\n")
    return complete, rest


def parse(line: bytes) -> WatchResponse:
    """One line of the stream as a response."""
    try:
        raw = json.loads(line)
    except ValueError:
        raise StreamError(f"watch: not JSON: {line[:200]!r}") from None
    if not isinstance(raw, dict):
        raise StreamError(f"watch: not an object: {line[:200]!r}")
    if "error" in raw:
        error = raw["error"]
        message = error.get("message", "") if isinstance(error, dict) else str(error)
        return WatchResponse(0, canceled=True, reason=str(message))
    result: dict[str, Any] = raw.get("result", {})
    events = tuple(
        (str(e.get("type", "PUT")), KeyValue(e.get("kv", {}))) for e in result.get("events", [])
    )
    return WatchResponse(
        revision=int(result.get("header", {}).get("revision", 0)),
        events=events,
        created=bool(result.get("created", False)),
        canceled=bool(result.get("canceled", False)),
        compact_revision=int(result.get("compact_revision", 0)),
        reason=str(result.get("cancel_reason", "")),
    )


def fresh(response: WatchResponse, start: int) -> tuple[Event, ...]:
    """The response's events not delivered before: those from ``start`` on (a stream opened
    again on another member from ``start`` never repeats one, whatever it sends)."""
    return tuple(e for e in response.events if e[1].mod_revision >= start)


def resume(start: int, response: WatchResponse) -> int:
    """The revision to open the stream from again after ``response``: past its last event
    (etcd sends all of one revision in one response); past its revision for a progress
    notification (no events: everything up to it was sent); else unchanged — the
    ``created`` response's revision is the member's when the watch began, and the events
    since ``start`` come after it."""
    if response.events:
        return max(start, *(kv.mod_revision + 1 for _, kv in response.events))
    if response.created or response.canceled:
        return start
    return max(start, response.revision + 1)
