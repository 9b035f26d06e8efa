"""etcd v3 through the JSON gateway etcd serves on its client port (``/v3/…``), over the
standard library's ``http.client`` — the client the etcd store is built on (issue 12).

Why not a package: ``etcd3`` fails on current protobuf; ``etcd3gw`` talks to this same
gateway but through ``requests``, whose import alone costs more than a memkeeper ``read``,
and every agent's CLI call would pay it. The gateway's surface memkeeper needs is small:
``range``, ``put``, ``deleterange``, ``txn`` (compare-and-swap), ``lease`` grant / keep-alive /
revoke / time-to-live and ``status``; the watch is ``watch.py``'s, on a socket of its own.
Keys and values are bytes (base64 on the wire); int64s arrive as JSON strings and are
returned as ints.

One connection is kept per endpoint (HTTP/1.1 keep-alive, Nagle off), over TLS when the
store's ``Access`` says so. A request that cannot reach an endpoint tries the next one; when
none answers, ``Unavailable`` — the store's ``store_unavailable``. A request that reached etcd
and was refused is ``EtcdError``; refused because of who memkeeper is (its certificate, its
user, its rights), ``Refused``, whose message names the setting to fix.

With a user, the first request authenticates (``/v3/auth/authenticate``: a token), and every
request carries the token in its ``Authorization`` header. A token etcd no longer knows (it
expires after the members' ``--auth-token-ttl`` unused, 5 minutes by default; a restart
forgets it) is replaced once, the request sent again, under ``AUTH_RETRY``.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time

from memkeeper.fs.readable import readable
from memkeeper.store.etcd import access as guard
from memkeeper.store.etcd import wire
from memkeeper.store.etcd.access import Access
from memkeeper.store.etcd.tokens import Login, Tokens
from memkeeper.store.etcd.wire import (
    Compare,
    EtcdError,
    KeyValue,
    Refused,
    TxnResult,
    Unavailable,
    b64,
    delete,
    get,
    parse_endpoints,
    prefix_end,
    put,
)
from memkeeper.store.retry import Retry

__all__ = [
    "Access",
    "Compare",
    "EtcdError",
    "Gateway",
    "KeyValue",
    "Refused",
    "TxnResult",
    "Unavailable",
    "b64",
    "delete",
    "get",
    "parse_endpoints",
    "prefix_end",
    "put",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from memkeeper.store.etcd.members import Members

    Endpoint = tuple[str, int]

TIMEOUT_S = 5.0
# The wait for a member's answer while another is left to ask (then it counts as silent).
FAILOVER_S = 1.0
# How often a request waiting for its answer looks whether its member was found silent.
SLICE_S = 0.05


class TokenExpired(Exception):
    """etcd no longer knows the token a request carried: authenticate again."""


AUTH_RETRY = Retry(
    2,
    on=(TokenExpired,),
    give_up=lambda _: Refused(
        "etcd refused the token it had just issued — check the members' --auth-token setting"
    ),
)


class Gateway:
    """A client of one etcd cluster, given its members' client endpoints and how to reach
    them (``access``: TLS, a user; by default plain HTTP, without authentication)."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        timeout: float = TIMEOUT_S,
        members: Members | None = None,
        access: Access | None = None,
        tokens: Tokens | None = None,
    ) -> None:
        if not endpoints:
            raise ValueError("an etcd cluster needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.timeout = timeout
        self.access = access or Access()
        # The user's token (the one the home keeps, ``tokens``, tried first).
        self.login = Login(self.access, self.endpoints, tokens)
        self._unanswered = False  # a member closed a connection without answering
        # Requests handed on from a member to the next (refused, silent, without a leader):
        # a commit's comparisons failing after one may have failed against its own first copy.
        self.failovers = 0
        # Which members went silent lately, across processes (members.py): asked last.
        self.members = members
        self._connections: dict[Endpoint, http.client.HTTPConnection] = {}
        self._preferred = 0 if members is None else members.order(self.endpoints)[0]

    # -- keys ----------------------------------------------------------------------------

    def range(
        self,
        key: bytes,
        range_end: bytes | None = None,
        *,
        revision: int = 0,
        limit: int = 0,
        descending: bool = False,
        sort_target: str = "KEY",
        keys_only: bool = False,
    ) -> tuple[int, list[KeyValue]]:
        """The revision of the answer and the keys in ``[key, range_end)`` (``key`` alone
        without ``range_end``), at ``revision`` (0: the latest); at most ``limit`` (0: all),
        by key (or ``sort_target`` ``MOD``, ``CREATE``, ``VERSION``), last first with
        ``descending``; without their values with ``keys_only``."""
        body: dict[str, Any] = {"key": b64(key)}
        if range_end is not None:
            body["range_end"] = b64(range_end)
        if revision:
            body["revision"] = str(revision)
        if limit:
            body["limit"] = str(limit)
        if descending or sort_target != "KEY":
            body["sort_order"] = "DESCEND" if descending else "ASCEND"
            body["sort_target"] = sort_target
        if keys_only:
            body["keys_only"] = True
        answer = self.call("/v3/kv/range", body)
        kvs = [KeyValue(kv) for kv in answer.get("kvs", [])]
        return int(answer.get("header", {}).get("revision", 0)), kvs

    def put(self, key: bytes, value: bytes, lease: int = 0) -> int:
        """Store ``value`` at ``key``; the revision it made."""
        answer = self.call("/v3/kv/put", put(key, value, lease)["request_put"])
        return int(answer.get("header", {}).get("revision", 0))

    def delete(self, key: bytes, range_end: bytes | None = None) -> int:
        """Delete ``key`` (or ``[key, range_end)``); how many keys went."""
        answer = self.call("/v3/kv/deleterange", delete(key, range_end)["request_delete_range"])
        return int(answer.get("deleted", 0))

    def txn(
        self,
        compare: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> TxnResult:
        """If every comparison holds, run ``success``, else ``failure``: atomically."""
        body = {
            "compare": [c.to_json() for c in compare],
            "success": list(success),
            "failure": list(failure),
        }
        return TxnResult(self.call("/v3/kv/txn", body))

    # -- leases --------------------------------------------------------------------------

    def grant(self, ttl: float) -> tuple[int, int]:
        """A new lease of at least ``ttl`` seconds (etcd counts whole seconds): id, TTL."""
        answer = self.call("/v3/lease/grant", {"TTL": str(max(1, round(ttl + 0.4999)))})
        return int(answer["ID"]), int(answer["TTL"])

    def keepalive(self, lease: int) -> int:
        """Renew a lease for its TTL again; its TTL (0 or less: it has expired)."""
        answer = self.call("/v3/lease/keepalive", {"ID": str(lease)})
        return int(answer.get("result", {}).get("TTL", 0))

    def revoke(self, lease: int) -> None:
        """End a lease now, deleting its keys (an expired one is no error)."""
        try:
            self.call("/v3/lease/revoke", {"ID": str(lease)})
        except EtcdError as exc:
            if "not found" not in str(exc):
                raise

    def time_to_live(self, lease: int) -> int:
        """Seconds left of a lease (-1: it has expired or never was)."""
        answer = self.call("/v3/lease/timetolive", {"ID": str(lease)})
        return int(answer.get("TTL", -1))

    # -- the cluster ---------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The answering member's status (leader, raft index, db size, version)."""
        return self.call("/v3/maintenance/status", {})

    # -- what a watch on a socket of its own needs ---------------------------------------

    def stream(self, endpoint: Endpoint, timeout: float) -> socket.socket:
        """A new connection to ``endpoint`` for one long request read as it comes (a watch),
        made as this gateway makes its own (over TLS when the store's access says so)."""
        raw = socket.create_connection(endpoint, timeout=timeout)
        context = self.access.context
        if context is None:
            return raw
        try:
            return context.wrap_socket(raw, server_hostname=endpoint[0])
        except ssl.SSLError as exc:
            raw.close()
            self._tls_failed(endpoint, exc)
            raise

    def headers(self) -> dict[str, str]:
        """What each request carries besides its body (with a user: its token)."""
        extra = self._headers() if self.access.user is not None else {}
        return {"Content-Type": "application/json", **extra}

    def alike(self) -> Gateway:
        """A gateway of the same cluster, reached the same way, with the same memory of
        silent members, and connections of its own (for another thread)."""
        return Gateway(self.endpoints, self.timeout, self.members, self.access, self.login.tokens)

    def alone(self, endpoint: Endpoint, timeout: float) -> Gateway:
        """A gateway of ``endpoint`` alone, reached as this one reaches it (a liveness probe:
        it remembers nothing of silent members)."""
        return Gateway([endpoint], timeout=timeout, access=self.access, tokens=self.login.tokens)

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()

    def __del__(self) -> None:  # a store dropped unclosed (the CLI exits without closing)
        self.close()

    # -- the wire ------------------------------------------------------------------------

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """One gateway request, to the first endpoint that answers, as the store's user."""
        if self.access.user is None:
            return self._send(path, body, {})
        return AUTH_RETRY(self._authorized, path, body)

    def _authorized(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = self._headers()
        try:
            return self._send(path, body, headers)
        except EtcdError as exc:
            if exc.code == 16 or "invalid auth token" in str(exc):  # UNAUTHENTICATED
                self.login.expired()
                raise TokenExpired(str(exc)) from None
            raise

    def _headers(self) -> dict[str, str]:
        """The headers a request carries: the user's token (authenticating first)."""
        return self.login.headers(lambda body: self._send("/v3/auth/authenticate", body, {}))

    def _send(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **headers}
        sent = False
        order = self._order_indexes()
        for turn, index in enumerate(order):
            endpoint = self.endpoints[index]
            self.failovers += turn > 0
            asked = False
            # Another member left to ask: a silent one is given up on sooner.
            wait = self.timeout if turn == len(order) - 1 else min(self.timeout, FAILOVER_S)
            try:
                conn = self._connection(endpoint, wait)
                since = self.members.clock() if self.members is not None else 0.0
                conn.request("POST", path, payload, headers)
                asked = True
                if turn < len(order) - 1 and not self._answering(conn, endpoint, wait, since):
                    raise TimeoutError(f"{endpoint}: found silent while it was asked")
                response = conn.getresponse()
                data = response.read()
            except ssl.SSLError as exc:
                self._tls_failed(endpoint, exc)
                sent = sent or asked
                continue
            except (OSError, http.client.HTTPException) as exc:
                self._unanswered |= isinstance(exc, ConnectionResetError)
                sent = sent or asked
                self._drop(endpoint)
                if self.members is not None:
                    self.members.silent(endpoint)
                continue
            if response.status == 503 or wire.unavailable(data):
                self._drop(endpoint)
                continue  # no leader here (a partitioned or starting member): try another
            self._preferred = index
            if self.members is not None:
                self.members.answered(endpoint)
            return self._answer(response.status, data)
        raise Unavailable(self._unreachable(), sent=sent)

    def _answering(
        self, conn: http.client.HTTPConnection, endpoint: Endpoint, wait: float, since: float
    ) -> bool:
        """Whether an answer begins within ``wait``; given up on sooner once the memory of
        silent members says this one went silent after ``since`` (a daemon's watch, in
        another thread, found it so: the request need not wait out its second)."""
        if self.members is None or conn.sock is None:
            return True  # (the socket's own timeout bounds the wait)
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            if readable(conn.sock, min(left, SLICE_S)):
                return True
            if self.members.silent_since(endpoint) >= since:
                return False
        return False

    def _answer(self, status: int, data: bytes) -> dict[str, Any]:
        try:
            return wire.answer(status, data)
        except EtcdError as exc:
            why = guard.refusal(str(exc), exc.code, self.access) or guard.gateway_refusal(data)
            if why is None:
                raise
            raise Refused(why, exc.code) from None

    def _tls_failed(self, endpoint: Endpoint, exc: ssl.SSLError) -> None:
        """A TLS exchange with ``endpoint`` failed: ``Refused`` unless it was cut short."""
        self._drop(endpoint)
        why = guard.tls_refusal(f"{endpoint[0]}:{endpoint[1]}", exc, self.access)
        if why is not None:
            raise Refused(why) from None

    def _order_indexes(self) -> list[int]:
        n = len(self.endpoints)
        if self.members is None:
            return [(self._preferred + i) % n for i in range(n)]
        ranked = self.members.order(self.endpoints)
        if self.members.quiet(self.endpoints[self._preferred]):
            return ranked  # found silent since it last answered here (by a watch's probes)
        return [self._preferred, *(i for i in ranked if i != self._preferred)]

    def _order(self) -> list[Endpoint]:
        return [self.endpoints[i] for i in self._order_indexes()]

    def _connection(self, endpoint: Endpoint, wait: float) -> http.client.HTTPConnection:
        conn = self._connections.get(endpoint)
        if conn is None:
            conn = self._open(endpoint, wait)
            conn.connect()
            assert conn.sock is not None
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connections[endpoint] = conn
        elif conn.sock is not None:
            conn.sock.settimeout(wait)
        return conn

    def _open(self, endpoint: Endpoint, wait: float | None) -> http.client.HTTPConnection:
        if self.access.context is None:
            return http.client.HTTPConnection(*endpoint, timeout=wait)
        return http.client.HTTPSConnection(*endpoint, timeout=wait, context=self.access.context)

    def _drop(self, endpoint: Endpoint) -> None:
        conn = self._connections.pop(endpoint, None)
        if conn is not None:
            conn.close()

    def _unreachable(self) -> str:
        where = ", ".join(f"{host}:{port}" for host, port in self.endpoints)
        if self._unanswered and self.access.context is None:
            # What a member that serves TLS does with a plain HTTP request.
            return (
                f"no etcd member answered ({where}; one closed the connection unanswered: "
                "if the members serve TLS, name the store etcds://…)"
            )
        return f"no etcd member answered ({where})"
