"""MCP tool call round trips: ``memory_read`` and ``memory_patch`` against `memkeeper mcp`.

    .venv/bin/python -m bench.mcp [--calls 200] [--starts 5] [--json]

The SDK's own client (``mcp.client.Client`` over stdio, ``StdioServerParameters``) starts
``memkeeper mcp`` in a copy of sample-repo, as an agent's MCP host does. Round trip: one
``call_tool`` from the request to the structured result, after start-up and a first call
(which opens the ``Memory`` of the server's worker thread). In the same loop, in turn with
each MCP call, the same operation through ``Memory`` in this process (what the tool itself
costs), through a raw JSON-RPC client (one line written to a second ``memkeeper mcp``'s
stdin, one line read back: no SDK on the client side, so the difference to the SDK client
is the client's own share) and, every tenth round, through the CLI in a subprocess (what
an agent without MCP runs): the side-by-side columns. ``memory_patch`` alternates bodies of
one section and passes the rev the last patch returned, as a careful agent does (the raw
client patches the same section, in turn with the SDK client). Goal (issue 11): median
round trip ≤ 5 ms after start-up. Start-up (spawn → initialized, then → first result) is
timed over ``--starts`` fresh servers, next to ``python -c pass`` and the SDK's import alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench.fixture import bench_env, sample_copy
from bench.stats import Figure, Summary, figure_table, summarize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence
    from typing import Any

    from mcp.client import Client

GOAL_MS = 5.0
REF = "CLAUDE.md#inventory-service/build"  # MCP's section
OTHER = "CLAUDE.md#inventory-service/testing"  # the in-process and CLI side's, same file
CLI_EVERY = 10
PROTOCOL = "2025-11-25"  # the raw client's protocol version


# The SDK's floor: its own server with one tool that returns at once, run (like memkeeper's
# plain functions) in a worker thread, over the same stdio transport and client.
FLOOR = """
from typing import Any
from mcp.server.mcpserver import MCPServer
server = MCPServer("floor")
@server.tool()
def noop(ref: str) -> dict[str, Any]:
    \"\"\"Return at once.\"\"\"
    return {"status": "ok", "ref": ref}
server.run("stdio")
"""


class Sides(NamedTuple):
    """Seconds per call, per side, of one operation (``raw``: a raw JSON-RPC client)."""

    mcp: list[float]
    api: list[float]
    floor: list[float]
    cli: list[float]
    raw: list[float]
    raw_floor: list[float]


class Raw:
    """A raw JSON-RPC client: each call one line to the server's stdin and one line back from
    its stdout, blocking, with nothing of the SDK on this side."""

    def __init__(self, argv: Sequence[str], root: Path, env: Mapping[str, str]) -> None:
        self.server = subprocess.Popen(
            argv, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.last_id = 0
        hello = {"name": "bench-raw", "version": "1.0"}
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": hello})  # fmt: skip
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.server.stdin is not None
        self.server.stdin.write(json.dumps(message).encode() + b"\n")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.server.stdout is not None
        self.last_id += 1
        self._send({"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params})
        answer: dict[str, Any] = json.loads(self.server.stdout.readline())
        if answer.get("id") != self.last_id or "result" not in answer:
            raise RuntimeError(f"{method}: {answer}")
        result: dict[str, Any] = answer["result"]
        return result

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        content = self.request("tools/call", {"name": tool, "arguments": arguments})
        found = content.get("structuredContent")
        if content.get("isError") or not isinstance(found, dict) or found.get("status") != "ok":
            raise RuntimeError(f"{tool}: {content}")
        return found

    def close(self) -> None:
        assert self.server.stdin is not None
        assert self.server.stdout is not None
        self.server.stdin.close()
        self.server.wait(timeout=30)
        self.server.stdout.close()


def server_argv(floor: bool = False) -> list[str]:
    """``memkeeper mcp``, or the SDK's own no-op server."""
    memkeeper = str(Path(sys.executable).parent / "memkeeper")
    return [sys.executable, "-c", FLOOR] if floor else [memkeeper, "mcp"]


def client(root: Path, env: Mapping[str, str], floor: bool = False) -> Client:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp_types import Implementation

    command, *args = server_argv(floor)
    server = StdioServerParameters(command=command, args=args, cwd=str(root), env=dict(env))
    info = Implementation(name="bench", version="1.0")
    return Client(server, client_info=info, read_timeout_seconds=60)


async def call(c: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await c.call_tool(tool, arguments)
    content = result.structured_content
    if result.is_error or not isinstance(content, dict) or content.get("status") != "ok":
        raise RuntimeError(f"{tool}: {result}")
    return content


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


async def clocked(work: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


def cli_seconds(root: Path, env: Mapping[str, str], argv: Sequence[str], stdin: str) -> float:
    memkeeper = str(Path(sys.executable).parent / "memkeeper")
    start = time.perf_counter()
    subprocess.run(
        [memkeeper, *argv], cwd=root, env=env, input=stdin.encode(), capture_output=True, check=True
    )
    return time.perf_counter() - start


async def round_trips(root: Path, env: Mapping[str, str], calls: int) -> dict[str, Sides]:
    from memkeeper import Memory

    memory = Memory.open(root, agent="bench-api")
    reads, patches = Sides([], [], [], [], [], []), Sides([], [], [], [], [], [])
    raw, raw_floor = Raw(server_argv(), root, env), Raw(server_argv(floor=True), root, env)
    async with client(root, env) as c, client(root, env, floor=True) as f:
        mine = await call(c, "memory_read", ref=REF)  # warm-up: the worker's Memory opens
        await call(f, "noop", ref=REF)
        raw.call("memory_read", ref=REF)
        raw_floor.call("noop", ref=REF)
        base, rev = mine["content"], mine["rev"]
        other = memory.read(OTHER)
        other_base, other_rev = other.content, other.rev
        for n in range(calls):
            reads.mcp.append(await clocked(lambda: call(c, "memory_read", ref=REF)))
            reads.api.append(timed(lambda: memory.read(OTHER)))
            reads.floor.append(await clocked(lambda: call(f, "noop", ref=REF)))
            reads.raw.append(timed(lambda: raw.call("memory_read", ref=REF)))
            reads.raw_floor.append(timed(lambda: raw_floor.call("noop", ref=REF)))
            body, other_body = f"{base}- {n % 2}\n", f"{other_base}- {n % 2}\n"
            start = time.perf_counter()
            rev = (await call(c, "memory_patch", ref=REF, body=body, expect_rev=rev))["rev"]
            patches.mcp.append(time.perf_counter() - start)
            start = time.perf_counter()
            other_rev = memory.patch(OTHER, other_body, expect_rev=other_rev).rev
            patches.api.append(time.perf_counter() - start)
            start = time.perf_counter()  # the raw client patches MCP's section in turn with it
            raw_body = f"{base}- raw {n % 2}\n"
            rev = raw.call("memory_patch", ref=REF, body=raw_body, expect_rev=rev)["rev"]
            patches.raw.append(time.perf_counter() - start)
            patches.floor.append(reads.floor[-1])  # the floor is the same for both tools
            patches.raw_floor.append(reads.raw_floor[-1])
            if n % CLI_EVERY == 0:  # the CLI writes the body the next in-process patch replaces
                reads.cli.append(cli_seconds(root, env, ["read", OTHER, "--json"], ""))
                argv = ["patch", OTHER, "--expect-rev", str(other_rev), "--body-file", "-"]
                cli_body = f"{other_base}- {(n + 1) % 2}\n"
                patches.cli.append(cli_seconds(root, env, [*argv, "--json"], cli_body))
                other_rev += 1
    raw.close()
    raw_floor.close()
    memory.close()
    return {"memory_read": reads, "memory_patch": patches}


async def start_ups(root: Path, env: Mapping[str, str], starts: int) -> dict[str, list[float]]:
    """Spawn → initialized, and spawn → first ``memory_read`` result, per fresh server; and,
    in turn with them, ``python -c pass`` and the SDK's server import alone. (The round
    trips ran first: their server cached the bytecode an installed package has.)"""
    out: dict[str, list[float]] = {"ready": [], "first": [], "pass": [], "import": []}
    _python(env, "import mcp.server.mcpserver")  # warm-up: bytecode cached, as installed
    for _ in range(starts):
        start = time.perf_counter()
        async with client(root, env) as c:
            out["ready"].append(time.perf_counter() - start)
            await call(c, "memory_read", ref=REF)
            out["first"].append(time.perf_counter() - start)
        out["pass"].append(_python(env, "pass"))
        out["import"].append(_python(env, "import mcp.server.mcpserver"))
    return out


def _python(env: Mapping[str, str], code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _ms(s: Summary) -> str:
    return f"{s.median * 1e3:.2f} ms (p90 {s.p90 * 1e3:.2f})"


def figures(result: dict[str, Any]) -> list[Figure]:
    out = []
    for tool, sides in result["round_trips"].items():
        mcp, api, floor, cli, raw, raw_floor = (summarize(x) for x in sides)
        what = f"`{tool}` round trip over stdio (SDK client → `memkeeper mcp`), after start-up"
        out.append(
            Figure(
                what,
                _ms(mcp),
                f"`Memory` in process: {_ms(api)}; raw JSON-RPC client → `memkeeper mcp`: "
                f"{_ms(raw)}; the SDK's own no-op tool over stdio: {_ms(floor)} (raw client: "
                f"{_ms(raw_floor)}); CLI subprocess: {_ms(cli)}",
                f"{mcp.median / floor.median:.2f}x no-op; {mcp.median / cli.median:.2f}x CLI",
                f"median ≤ {GOAL_MS:g} ms",
                mcp.median * 1e3 <= GOAL_MS,
            )
        )
    ready, first, passes, imports = (
        summarize(result["start_up"][k]) for k in ("ready", "first", "pass", "import")
    )
    out.append(
        Figure(
            "`memkeeper mcp` start-up: spawn → initialized (→ first `memory_read` result)",
            f"{_ms(ready)} (→ {_ms(first)})",
            f"`python -c pass`: {_ms(passes)}; `python -c 'import mcp.server.mcpserver'`: "
            f"{_ms(imports)}",
            f"{ready.median / passes.median:.2f}x pass",
            "—",
            None,
        )
    )
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import anyio

    work = Path(tempfile.mkdtemp(prefix="memkeeper-mcp-", dir=args.dir))
    try:
        root = sample_copy(work / "repo")
        env = bench_env(work / "pycache", as_is=False)
        subprocess.run(
            [str(Path(sys.executable).parent / "memkeeper"), "init"],
            cwd=root, env=env, check=True, capture_output=True,
        )  # fmt: skip

        async def both() -> tuple[dict[str, Sides], dict[str, list[float]]]:
            return await round_trips(root, env, args.calls), await start_ups(root, env, args.starts)

        trips, starts = anyio.run(both)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"round_trips": trips, "start_up": starts}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="round trips per tool (200)")
    parser.add_argument("--starts", type=int, default=5, help="fresh servers timed (5)")
    parser.add_argument("--dir", default=None, help="where the temp repository goes")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import mcp  # noqa: F401  # the optional extra: say so instead of a traceback
    except ImportError:
        print("bench.mcp needs the MCP SDK: pip install 'memkeeper[mcp]'", file=sys.stderr)
        return 1
    result = measure(args)
    found = figures(result)
    if args.json:
        print(json.dumps([f.to_json() for f in found], indent=2, ensure_ascii=False))
        return 0
    print(figure_table(found))
    print(f"\n{args.calls} calls per tool in turn with `Memory`; the CLI every {CLI_EVERY}th round")
    return 0


if __name__ == "__main__":
    sys.exit(main())
