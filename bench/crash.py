"""Do fencing tokens keep rising across a crash of the process that keeps them?

For each token keeper: hand out a token, SIGKILL the keeper, restart it on the same data and
hand out the next one. memkeeper has no server: its keeper is whichever process claims, so a
worker process claims and releases in a loop until it is killed mid-way, and the benchmark's
own ``Memory`` claims next. A SIGKILL loses what a process had not written to the kernel yet;
it does not lose the page cache, as a power cut would (see bench/README.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import NamedTuple

from bench.clients import Etcd, Resp, b64
from bench.sides import FENCE, REDIS, TTL_S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from bench.servers import Server
    from memkeeper import Memory

WORKER = """
import sys
from memkeeper import Memory
memory = Memory.open(sys.argv[1], agent="crash-worker")
print("claiming", flush=True)
while True:
    memory.release(memory.claim("src/crash/", mode="write", ttl=30).id)
"""


class CrashCheck(NamedTuple):
    """The last token before the keeper's SIGKILL and the first one after its restart."""

    keeper: str
    killed: str
    before: int
    after: int

    @property
    def rising(self) -> bool:
        return self.after > self.before

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "rising": self.rising}


def check_all(memory: Memory, started: dict[str, Server]) -> list[CrashCheck]:
    checks = [memkeeper(memory)]
    for setup in REDIS:
        checks.append(restarted(started[setup.name], _redis_token))
    checks.append(restarted(started["etcd"], _etcd_token))
    return checks


def memkeeper(memory: Memory, run_s: float = 0.5) -> CrashCheck:
    """A worker claims and releases for ``run_s``, is killed mid-way; then we claim."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    argv = [sys.executable, "-c", WORKER, str(memory.root)]
    worker = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
    try:
        assert worker.stdout is not None
        worker.stdout.readline()
        time.sleep(run_s)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        if worker.stdout is not None:
            worker.stdout.close()
    before = max(_granted_tokens(memory))
    claim = memory.claim("src/after-crash/", mode="write", ttl=TTL_S)
    memory.release(claim.id)
    return CrashCheck("memkeeper", "a process claiming in a loop", before, claim.token)


def _granted_tokens(memory: Memory) -> Sequence[int]:
    return [int(e.data["token"]) for e in memory.events() if e.type == "claim.granted"]


def restarted(server: Server, token: Callable[[int], int]) -> CrashCheck:
    before = token(server.port)
    server.kill()
    server.start()
    return CrashCheck(server.name, "the server", before, token(server.port))


def _redis_token(port: int) -> int:
    client = Resp(port)
    try:
        token = client.call("INCR", FENCE)
    finally:
        client.close()
    assert isinstance(token, int)
    return token


def _etcd_token(port: int) -> int:
    client = Etcd(port)
    try:
        put = {"request_put": {"key": b64("crash-check"), "value": b64("x")}}
        txn = client.post("/v3/kv/txn", {"success": [put]})
    finally:
        client.close()
    return int(txn["header"]["revision"])


def table(checks: Sequence[CrashCheck]) -> str:
    lines = [
        "| token keeper | SIGKILLed | last token before | first token after restart | rising? |",
        "| --- | --- | --- | --- | --- |",
    ]
    for check in checks:
        rising = "yes" if check.rising else "**no**"
        lines.append(
            f"| {check.keeper} | {check.killed} | {check.before:,} | {check.after:,} | {rising} |"
        )
    return "\n".join(lines)
