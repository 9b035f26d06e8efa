"""The sides of the claim benchmark: what one claim+release pair is on each, and what it pays.

Each ``pair()`` takes an exclusive lease on one key, gives it back and returns the grant's
fencing token; a failed grant is an error (nobody else holds the key during the benchmark).
``cost`` counts the round trips to a server and the fsyncs (fdatasync) one pair waits for,
as ``strace -f -e trace=fsync,fdatasync`` showed on this machine (bench/README.md).
"""

from __future__ import annotations

from typing import NamedTuple

from bench.clients import Etcd, Resp, b64

TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextlib
    from collections.abc import Callable
    from typing import Any

    from memkeeper import Memory

TARGET = "src/inventory/"  # memkeeper's path target; the lock's key on the other sides
TTL_S = 30
LOCK, FENCE = f"lock:{TARGET}", "fence"
# Atomically: no grant while the key is held, else the next token, stored under the key.
SCRIPT = (
    "if redis.call('EXISTS', KEYS[1]) == 1 then return false end "
    "local token = redis.call('INCR', KEYS[2]) "
    "redis.call('SET', KEYS[1], token, 'PX', ARGV[1]) return token"
)
REDIS_PAIR = f"`INCR {FENCE}` (the token), `SET {LOCK} <token> NX PX {TTL_S * 1000}`, `DEL`"


class RedisSetup(NamedTuple):
    """One redis-server: its command-line settings and what they cost a write."""

    name: str
    args: tuple[str, ...]
    settings: str
    fsyncs: str
    goal: float | None


BUILT_IN = "redis-server's built-in defaults (no config file)"
REDIS = (
    RedisSetup("redis-always", ("--appendonly", "yes", "--appendfsync", "always"),
               f"{BUILT_IN} + `--appendonly yes --appendfsync always`", "3 fsyncs (AOF)", 1.5),
    RedisSetup("redis-everysec", ("--appendonly", "yes", "--appendfsync", "everysec"),
               f"{BUILT_IN} + `--appendonly yes --appendfsync everysec`",
               "0 fsyncs (one a second, in a background thread)", None),
    RedisSetup("redis-default", (), f"{BUILT_IN}: no AOF; RDB snapshot after 3600 s/1, "
               "300 s/100 or 60 s/10,000 changes", "0 fsyncs", None),
)  # fmt: skip


class Side(NamedTuple):
    """One compared design; ``goal`` is the least memkeeper ÷ side rate ratio wanted."""

    name: str
    settings: str
    cost: str
    goal: float | None
    pair: Callable[[], int]

    def to_json(self) -> dict[str, Any]:
        return {"side": self.name, "settings": self.settings, "cost": self.cost,
                "goal": self.goal}  # fmt: skip


def memkeeper_pair(memory: Memory) -> Side:
    def pair() -> int:
        claim = memory.claim(TARGET, mode="write", ttl=TTL_S)
        memory.release(claim.id)
        return claim.token

    settings = (
        f"`Memory.claim({TARGET!r}, mode='write', ttl={TTL_S})` + `Memory.release(id)` on one "
        "`Memory` in a temp copy of sample-repo: each one SQLite transaction (`BEGIN IMMEDIATE`, "
        "WAL) that reads the claims and the queue in one statement, sweeps expired claims, "
        "serves the queue and appends a hash-chained event; the grant's commit is synced "
        "before it returns (its token survives a power cut), the release's is not; the token "
        "is a counter bumped in the grant"
    )
    return Side("memkeeper", settings, "0 round trips, 1 fsync (WAL)", None, pair)


def redis_pair(stack: contextlib.ExitStack, setup: RedisSetup, port: int) -> Side:
    client = Resp(port)
    stack.callback(client.close)

    def pair() -> int:
        token = client.call("INCR", FENCE)
        assert isinstance(token, int)
        if client.call("SET", LOCK, token, "NX", "PX", TTL_S * 1000) != b"OK":
            raise RuntimeError(f"{setup.name}: SET NX refused a free lock")
        client.call("DEL", LOCK)
        return token

    settings = f"{setup.settings}; {REDIS_PAIR}"
    return Side(setup.name, settings, f"3 round trips, {setup.fsyncs}", setup.goal, pair)


def redis_script_pair(stack: contextlib.ExitStack, name: str, port: int) -> Side:
    client = Resp(port)
    stack.callback(client.close)
    sha = client.call("SCRIPT", "LOAD", SCRIPT)
    assert isinstance(sha, bytes)

    def pair() -> int:
        token = client.call("EVALSHA", sha, 2, LOCK, FENCE, TTL_S * 1000)
        if not isinstance(token, int):
            raise RuntimeError(f"{name}: the script refused a free lock")
        client.call("DEL", LOCK)
        return token

    settings = (
        "the redis-always server; `EVALSHA` of a Lua script that checks `EXISTS`, `INCR`s the "
        "fence and `SET`s the key with `PX` atomically (one round trip), then `DEL`: the "
        "fewest round trips and fsyncs a Redis lock with fencing tokens can take"
    )
    return Side(name, settings, "2 round trips, 2 fsyncs (AOF)", 1.0, pair)


def etcd_pair(stack: contextlib.ExitStack, name: str, port: int) -> Side:
    client = Etcd(port)
    stack.callback(client.close)
    key, value = b64(LOCK), b64("bench")
    compare = [{"key": key, "target": "CREATE", "create_revision": "0"}]

    def pair() -> int:
        lease = client.post("/v3/lease/grant", {"TTL": TTL_S})["ID"]
        put = {"request_put": {"key": key, "value": value, "lease": lease}}
        txn = client.post("/v3/kv/txn", {"compare": compare, "success": [put]})
        if not txn.get("succeeded"):
            raise RuntimeError(f"{name}: the txn found the key held")
        client.post("/v3/lease/revoke", {"ID": lease})
        return int(txn["header"]["revision"])

    settings = (
        "etcd with its defaults (one member; every raft commit fdatasyncs the WAL), through "
        "its JSON gateway (HTTP/1.1, kept alive): `/v3/lease/grant` TTL "
        f"{TTL_S}, `/v3/kv/txn` (`create_revision == 0` → put the key with the lease), "
        "`/v3/lease/revoke` (deletes the key); the token is the txn's revision"
    )
    cost = "3 round trips (each one more inside etcd: gateway → gRPC), 3 fsyncs (WAL)"
    return Side(name, settings, cost, 5.0, pair)
