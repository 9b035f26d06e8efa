"""The etcd JSON gateway's shapes: the records its answers decode into, the errors they
raise, the operations and comparisons a transaction is made of, and the endpoints a cluster is
named by (pure)."""

from __future__ import annotations

import base64
import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Endpoint = tuple[str, int]


class Unavailable(Exception):
    """No endpoint of the cluster answered. ``sent``: the request reached one before its
    answer failed to come (a member may apply it later: its outcome is unknown)."""

    def __init__(self, message: str, *, sent: bool = False) -> None:
        super().__init__(message)
        self.sent = sent


class EtcdError(Exception):
    """etcd answered, with an error (``code`` is its gRPC status code, 0 when unknown)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class Refused(EtcdError):
    """etcd refused memkeeper for who it is — its TLS certificate, its user or password, the
    rights of its user — or speaks another protocol: a setting to fix, not a member to wait
    for. The message names the setting (never the password)."""


class KeyValue:
    """One key as etcd holds it."""

    __slots__ = ("key", "value", "create_revision", "mod_revision", "version", "lease")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.key = _unb64(raw.get("key"))
        self.value = _unb64(raw.get("value"))
        self.create_revision = int(raw.get("create_revision", 0))
        self.mod_revision = int(raw.get("mod_revision", 0))
        self.version = int(raw.get("version", 0))
        self.lease = int(raw.get("lease", 0))

    def __repr__(self) -> str:
        return f"KeyValue({self.key!r}, mod_revision={self.mod_revision})"


class Compare:
    """One comparison of a transaction: ``target`` (``VERSION``, ``CREATE``, ``MOD``,
    ``VALUE``, ``LEASE``) of ``key`` ``result`` (``EQUAL``, ``GREATER``, ``LESS``,
    ``NOT_EQUAL``) ``value``. A missing key has version, create and mod revision 0."""

    def __init__(self, key: bytes, target: str, result: str, value: int | bytes) -> None:
        self.key, self.target, self.result, self.value = key, target, result, value

    def to_json(self) -> dict[str, Any]:
        field = {
            "VERSION": "version",
            "CREATE": "create_revision",
            "MOD": "mod_revision",
            "VALUE": "value",
            "LEASE": "lease",
        }[self.target]
        value = b64(self.value) if isinstance(self.value, bytes) else str(self.value)
        return {"key": b64(self.key), "target": self.target, "result": self.result, field: value}


def put(key: bytes, value: bytes, lease: int = 0) -> dict[str, Any]:
    """A put, as one operation of a transaction."""
    body: dict[str, Any] = {"key": b64(key), "value": b64(value)}
    if lease:
        body["lease"] = str(lease)
    return {"request_put": body}


def delete(key: bytes, range_end: bytes | None = None) -> dict[str, Any]:
    """A delete (of ``[key, range_end)`` when given), as one operation of a transaction."""
    body = {"key": b64(key)}
    if range_end is not None:
        body["range_end"] = b64(range_end)
    return {"request_delete_range": body}


def get(key: bytes, range_end: bytes | None = None, revision: int = 0) -> dict[str, Any]:
    """A read (at ``revision``, 0: the latest), as one operation of a transaction."""
    body = {"key": b64(key)}
    if range_end is not None:
        body["range_end"] = b64(range_end)
    if revision:
        body["revision"] = str(revision)
    return {"request_range": body}


def prefix_end(prefix: bytes) -> bytes:
    """The ``range_end`` that makes a range cover every key starting with ``prefix``."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return b"\0"
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


class TxnResult:
    """A transaction's outcome: whether the comparisons held, the revision after it, and the
    answers of the branch that ran (each a list of ``KeyValue`` for a read, else [])."""

    __slots__ = ("succeeded", "revision", "responses")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.succeeded = bool(raw.get("succeeded", False))
        self.revision = int(raw.get("header", {}).get("revision", 0))
        self.responses: list[list[KeyValue]] = []
        for answer in raw.get("responses", []):
            found = answer.get("response_range", {}).get("kvs", [])
            self.responses.append([KeyValue(kv) for kv in found])


def parse_endpoints(text: str) -> list[Endpoint]:
    """``HOST:PORT[,HOST:PORT…]`` as endpoints (``ValueError`` naming a bad one)."""
    out = []
    for part in text.split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{part.strip()!r} is not HOST:PORT")
        out.append((host.strip("[]"), int(port)))
    return out


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: object) -> bytes:
    return base64.b64decode(text) if isinstance(text, str) else b""


def answer(status: int, data: bytes) -> dict[str, Any]:
    try:
        answer = json.loads(data) if data else {}
    except ValueError:
        raise EtcdError(f"etcd: HTTP {status}: not JSON: {data[:200]!r}") from None
    if not isinstance(answer, dict):
        raise EtcdError(f"etcd: HTTP {status}: unexpected answer {data[:200]!r}")
    if status != 200 or "error" in answer:
        message = answer.get("message") or answer.get("error") or data[:200].decode("replace")
        raise EtcdError(f"etcd: {message}", int(answer.get("code", 0) or 0))
    return answer


def unavailable(data: bytes) -> bool:
    """An answer that means "not now, ask another member" (no leader, a timeout)."""
    if b'"code"' not in data:
        return False
    try:
        code = int(json.loads(data).get("code", 0))
    except (ValueError, AttributeError):
        return False
    return code in (4, 14)  # DEADLINE_EXCEEDED, UNAVAILABLE
