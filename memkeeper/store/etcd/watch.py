"""A watch that stays on a live member: etcd's watch over the JSON gateway, on a socket of
its own, moved to another member the moment its member goes silent (issue 22 item 7).

A member frozen with a stream open on it keeps the socket and sends nothing, and an idle
stream sends nothing either: etcd's own progress notifications come every ten minutes. So the
stream is read with a short timeout (``TICK_S``), and on those ticks the members are asked,
each with a one-key read that needs the cluster's quorum, as ``liveness`` schedules it. A
stream whose member did not answer within ``ANSWER_S`` is closed and opened on the next
member, from the revision after the last event it delivered (``stream.resume``): nothing
missed, nothing delivered twice (``stream.fresh``). What the asking finds is told to the
gateway's memory of silent members (``members.Members``), which the commands read: a member
the watch found silent is asked last by every command after it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time

from memkeeper.store.etcd import liveness as lv
from memkeeper.store.etcd import stream as ws
from memkeeper.store.etcd.gateway import EtcdError, Gateway, Unavailable
from memkeeper.store.etcd.wire import b64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator

    from memkeeper.store.etcd.wire import KeyValue

    Endpoint = tuple[str, int]
    Batch = tuple[int, list[tuple[str, KeyValue]]]
    Responses = list[ws.WatchResponse]
    Opened = tuple[int, socket.socket, ws.Framing, Responses]

# How long a read of the stream waits before the members' liveness is looked at.
TICK_S = 0.1


class LiveWatch:
    """Changes of ``[key, range_end)`` from any member of the cluster that answers."""

    def __init__(
        self,
        gateway: Gateway,
        key: bytes,
        range_end: bytes | None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``gateway``: how the cluster is reached (its members, and its memory of the
        silent ones, told what the watch finds)."""
        self.gateway = gateway
        self.endpoints = list(gateway.endpoints)
        self.key, self.range_end = key, range_end
        self.members = gateway.members
        self.clock = clock
        self.live = lv.Liveness.of(len(self.endpoints))
        self.member: int | None = None  # the stream's member, while one is open
        self.moves = 0  # streams moved off a silent member (the tests read it)
        self.start = 0  # the first revision not delivered yet
        self._probes = [gateway.alone(e, lv.ANSWER_S) for e in self.endpoints]
        self._sock = socket.socket()  # the stream's, once one is open
        self._sock.close()
        self._closed = False

    def follow(self, start: int) -> Generator[Batch, None, None]:
        """Each response with events from ``start`` on, as ``(revision, events)``: raises
        ``EtcdError`` (code 11) when ``start`` was compacted, ``Unavailable`` once no member
        answers. ``start`` then holds the revision to follow from again."""
        self.start = start
        while not self._closed:
            opened = self._open()
            if opened is None:
                raise Unavailable(self._unreachable())
            member, self._sock, framing, first = opened
            try:
                yield from self._read(member, self._sock, framing, first)
            finally:
                self.member = None
                self._sock.close()

    def close(self) -> None:
        """End ``follow`` (from another thread too: its stream is shut down under it)."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        for probe in self._probes:
            probe.close()

    # -- the stream ----------------------------------------------------------------------

    def _open(self) -> Opened | None:
        """A stream from ``start`` on the first member that answers (its ``created``)."""
        order = self.members.order(self.endpoints) if self.members else range(len(self.endpoints))
        for member in lv.ranked(self.live, list(order)):
            try:
                sock, framing, first = self._create(self.endpoints[member])
            except (OSError, ws.StreamError):
                self._silent(member)
                continue
            self._answered(member)
            self.member = member
            return member, sock, framing, first
        return None

    def _create(self, endpoint: Endpoint) -> tuple[socket.socket, ws.Framing, Responses]:
        """A stream on ``endpoint`` and its responses up to ``created`` and any after it."""
        body: dict[str, str] = {"key": b64(self.key), "start_revision": str(self.start)}
        if self.range_end is not None:
            body["range_end"] = b64(self.range_end)
        payload = json.dumps({"create_request": body}).encode()
        headers = {**self.gateway.headers(), "Content-Length": str(len(payload))}
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head = f"POST /v3/watch HTTP/1.1\r\nHost: {endpoint[0]}:{endpoint[1]}\r\n{lines}\r\n"
        sock = self.gateway.stream(endpoint, lv.ANSWER_S)
        try:
            sock.sendall(head.encode() + payload)
            framing, got = ws.Framing(), list[ws.WatchResponse]()
            deadline = self.clock() + lv.ANSWER_S
            while not any(r.created or r.canceled for r in got):  # the member answers at once
                sock.settimeout(max(deadline - self.clock(), 0.001))
                data = sock.recv(65536)
                if not data:
                    raise ConnectionError("the member closed the watch")
                framing, more = ws.feed(framing, data)
                got += more
            sock.settimeout(TICK_S)
        except BaseException:
            sock.close()
            raise
        return sock, framing, got

    def _read(
        self, member: int, sock: socket.socket, framing: ws.Framing, got: Responses
    ) -> Generator[Batch, None, None]:
        """The stream's batches until its member is found silent, the stream ends, or the
        watch is closed."""
        while not self._closed:
            yield from self._batches(got)
            if framing.ended:
                return
            if not self._looked(member):
                self.moves += 1
                return
            try:
                data = sock.recv(65536)
            except TimeoutError:
                got = []
                continue
            except OSError:
                return  # cut: opened again (on this member if it answers)
            if not data:
                return
            self._answered(member)
            try:
                framing, got = ws.feed(framing, data)
            except ws.StreamError:
                return

    def _batches(self, responses: Responses) -> Iterator[Batch]:
        """The events not delivered yet, ``start`` moved past each batch as it goes
        (``EtcdError``: the stream was cancelled)."""
        for response in responses:
            if response.canceled:
                raise _cancelled(response)
            events = ws.fresh(response, self.start)
            self.start = ws.resume(self.start, response)
            if events:
                yield response.revision, list(events)

    # -- liveness ------------------------------------------------------------------------

    def _looked(self, stream: int) -> bool:
        """Ask the member that is due, if any; whether the stream's member is still alive."""
        member = lv.due(self.live, stream, self.clock())
        if member is None:
            return True
        self.live = lv.asked(self.live, member, self.clock())
        try:
            self._probes[member].range(self.key, keys_only=True, limit=1)
        except (Unavailable, EtcdError):
            self._silent(member)
            return member != stream
        self._answered(member)
        return True

    def _answered(self, member: int) -> None:
        self.live = lv.answered(self.live, member, self.clock())
        if self.members is not None:
            self.members.answered(self.endpoints[member])

    def _silent(self, member: int) -> None:
        if self._closed:
            return  # (a probe cut by ``close``: no word about the member)
        self.live = lv.unanswered(self.live, member)
        if self.members is not None:
            self.members.silent(self.endpoints[member])

    def _unreachable(self) -> str:
        where = ", ".join(f"{host}:{port}" for host, port in self.endpoints)
        return f"no etcd member answered the watch ({where})"


def _cancelled(response: ws.WatchResponse) -> EtcdError:
    if response.compact_revision:
        return EtcdError(f"watch: revision compacted (at {response.compact_revision})", 11)
    return EtcdError(f"watch: cancelled by etcd: {response.reason or 'no reason given'}")
