"""Stdlib clients for the claim benchmark's servers: Redis over RESP, etcd over its JSON gateway.

No dependency beyond the standard library, so ``python -m bench.claims`` runs with the project's
dev extra only. Both keep one TCP connection to 127.0.0.1 open (``TCP_NODELAY``), as a real
client library would, so each call is one round trip.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Reply = bytes | int | list["Reply"] | None


class ServerError(RuntimeError):
    """The server answered with an error."""


class Resp:
    """A minimal Redis client: one command, one reply (RESP2, no pipelining)."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")

    def call(self, *args: str | bytes | int) -> Reply:
        self.sock.sendall(encode(args))
        return self._reply()

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def _reply(self) -> Reply:
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise ServerError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if rest == b"-1" else self.reader.read(int(rest) + 2)[:-2]
        if kind == b"*":
            return None if rest == b"-1" else [self._reply() for _ in range(int(rest))]
        raise ConnectionError(f"not a RESP reply: {line!r}")


def encode(args: tuple[str | bytes | int, ...]) -> bytes:
    """A command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class Etcd:
    """etcd v3 through the JSON gateway that etcd serves on its client port (``/v3/...``)."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.connect()
        assert self.conn.sock is not None
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """One gateway call; ``ServerError`` for an HTTP error or an ``error`` field."""
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        self.conn.request("POST", path, payload, headers)
        return _answer(self.conn.getresponse())

    def get(self, path: str) -> dict[str, Any]:
        self.conn.request("GET", path)
        return _answer(self.conn.getresponse())

    def close(self) -> None:
        self.conn.close()


def _answer(response: http.client.HTTPResponse) -> dict[str, Any]:
    data = response.read()
    answer = json.loads(data) if data else {}
    if response.status != 200 or not isinstance(answer, dict) or "error" in answer:
        raise ServerError(f"etcd: HTTP {response.status}: {data[:200]!r}")
    return answer


def b64(text: str) -> str:
    """Keys and values travel base64-encoded through the gateway."""
    return base64.b64encode(text.encode()).decode()
